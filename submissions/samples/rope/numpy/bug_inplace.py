"""Bug: rotates x in place and returns it.

Must fail: input_unchanged
Mistake: rotated_in_place
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    h = d // 2
    theta = np.asarray(positions, dtype=np.float64)[:, None] * base ** (-2.0 * np.arange(h) / d)
    c, s = np.cos(theta), np.sin(theta)
    x1, x2 = x[..., :h].copy(), x[..., h:].copy()
    x[..., :h] = x1 * c - x2 * s
    x[..., h:] = x2 * c + x1 * s
    return x
