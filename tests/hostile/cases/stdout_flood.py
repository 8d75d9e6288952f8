"""Hostile: writes 1 GB to stdout at import, then answers correctly."""
import sys

import numpy as np

line = "x" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(line)
sys.stdout.flush()


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    with np.errstate(divide="ignore", over="ignore"):
        lse = m + np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))
        out = np.exp(x - lse)
    return np.where(np.isneginf(lse), 0, out).astype(x.dtype)
