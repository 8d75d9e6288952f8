"""Correct: the rotate_half formula with NumPy broadcasting, table in x's precision (float32 for float16)."""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    inv = 1.0 / np.power(work(base), np.arange(0, d, 2).astype(work) / work(d))
    theta = np.asarray(positions).astype(work)[:, None] * inv
    cos = np.cos(np.concatenate([theta, theta], -1))
    sin = np.sin(np.concatenate([theta, theta], -1))
    xw = x.astype(work)
    half = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], -1)
    return (xw * cos + half * sin).astype(x.dtype)
