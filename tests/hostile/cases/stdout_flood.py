"""Hostile: writes 1 GiB to stdout at import, then answers correctly. The output is capped; the
docker backend stops a run whose output goes far past the cap (crashed).

expect: crashed|graded
process: graded
passes: all|none
host: memory
"""
import sys

import numpy as np

line = "x" * (1 << 20)
for _ in range(1024):
    sys.stdout.write(line)
sys.stdout.flush()


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
