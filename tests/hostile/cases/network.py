"""Hostile: tries to reach the network at import, says what happened, then answers correctly."""
import socket

import numpy as np

for host, port in (("1.1.1.1", 80), ("10.0.0.1", 53), ("127.0.0.1", 2375)):
    try:
        socket.create_connection((host, port), timeout=2).close()
        print(f"NET: CONNECTED to {host}:{port}")
    except OSError as exc:
        print(f"NET: blocked {host}:{port}: {exc}")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    with np.errstate(divide="ignore", over="ignore"):
        lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
        out = np.exp(x - lse)
    return np.where(np.isneginf(lse), 0, out).astype(x.dtype)
