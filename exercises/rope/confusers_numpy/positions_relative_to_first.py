"""Confuser: positions taken relative to the first one (positions - positions[0], "RoPE is
relative anyway"). Contiguous T..T+L-1 becomes 0..L-1 (the positions_restart output); unsorted
[9, 3, 3, 0, 12, 5] becomes [0, -6, -6, -9, 3, -4], not 0..5.

Must not name: positions_restart
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    pos = np.asarray(positions).astype(np.int64)
    pos = (pos - pos[0]).astype(work)
    half = d // 2
    inv = (base ** (-np.arange(0, d, 2) / d)).astype(work)
    theta = pos[:, None] * inv
    c, s = np.cos(theta), np.sin(theta)
    xw = x.astype(work)
    x1, x2 = xw[..., :half], xw[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1).astype(x.dtype)
