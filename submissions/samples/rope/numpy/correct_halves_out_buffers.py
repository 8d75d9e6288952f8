"""Correct: the two halves rotated separately (no concatenated table), written into np.empty with out=."""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    *lead, L, d = x.shape
    if d % 2 != 0:
        raise ValueError("d must be even")
    h = d // 2
    work = x.dtype if x.dtype in (np.float32, np.float64) else np.dtype(np.float32)
    inv = (1.0 / base ** (np.arange(h) * 2.0 / d)).astype(work)
    theta = np.asarray(list(positions)).astype(work).reshape(L, 1) * inv
    c, s = np.cos(theta), np.sin(theta)
    x1 = x[..., :h].astype(work)
    x2 = x[..., h:].astype(work)
    out = np.empty(x.shape, dtype=work)
    np.subtract(x1 * c, x2 * s, out=out[..., :h])
    np.add(x2 * c, x1 * s, out=out[..., h:])
    return out.astype(x.dtype)
