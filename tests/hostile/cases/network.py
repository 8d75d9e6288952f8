"""Hostile: tries the network at import (TCP to the internet, a private address, the host's Docker
TCP port and the cloud metadata address; DNS; UDP), says what happened, then answers correctly.

expect: graded
process: graded
passes: all
output-has: NET: done
output-lacks: NET: CONNECTED | DNS: resolved | UDP: answered
"""
import socket

import numpy as np

for host, port in (("1.1.1.1", 80), ("10.0.0.1", 53), ("127.0.0.1", 2375), ("169.254.169.254", 80)):
    try:
        socket.create_connection((host, port), timeout=1).close()
        print(f"NET: CONNECTED to {host}:{port}")
    except OSError as exc:
        print(f"NET: blocked {host}:{port}: {exc}")
for name in ("example.com", "localhost.localdomain", "host.docker.internal"):
    try:
        print(f"DNS: resolved {name} to {socket.getaddrinfo(name, 80)[0][4]}")
    except OSError as exc:
        print(f"DNS: failed {name}: {exc}")
try:
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.settimeout(1)
    udp.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01",
               ("8.8.8.8", 53))
    udp.recvfrom(512)
    print("UDP: answered")
except OSError as exc:
    print(f"UDP: blocked: {exc}")
print("NET: done")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
