"""Bug: an odd d is not rejected.

Must fail: odd_d
Mistake: no_odd_check
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    theta = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2.0 * np.arange(h) / d)
    c, s = np.cos(theta), np.sin(theta)
    x1, x2 = x[..., :h].astype(np.float64), x[..., h:2 * h].astype(np.float64)
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s, x[..., 2 * h:]], -1).astype(x.dtype)
