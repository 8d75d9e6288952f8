"""Wrong (complexity only): p_i = 1 / sum_j exp(x_j - x_i) is exact and stable, but it builds every
pairwise difference along the axis, so its memory grows with the square of the row length.

Must fail: memory_scaling
Mistake: pairwise_quadratic
"""
import numpy as np


def softmax(x, axis=-1):
    z = np.moveaxis(x, axis, -1)
    finite_row = np.isfinite(z.max(axis=-1, keepdims=True))
    safe = np.where(np.isneginf(z), np.finfo(z.dtype).min, z)
    with np.errstate(over="ignore"):
        diffs = safe[..., None, :] - safe[..., :, None]        # (..., n, n)
        p = 1.0 / np.exp(diffs).sum(axis=-1)
    p = np.where(np.isneginf(z) | ~finite_row, 0.0, p).astype(x.dtype)
    return np.moveaxis(p, -1, axis)
