"""Hostile: fills the scratch /tmp until the disk is full, then answers correctly.

expect: graded
needs: box
passes: all
output-has: TMPFS: full after
"""
import os

import numpy as np

written = 0
try:
    for i in range(100000):
        with open(os.path.join("/tmp", f"fill-{i}"), "wb") as fh:
            fh.write(b"\xff" * (1 << 20))
        written += 1
except OSError as exc:
    print(f"TMPFS: full after {written} MiB: {exc.strerror}")


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
