"""Correct: x flattened to (N, L, d), each slice rotated in a list comprehension, np.stack, reshape back; float64 throughout."""
import numpy as np


def _rot(m, cos, sin):
    h = m.shape[-1] // 2
    return np.hstack([m[:, :h] * cos - m[:, h:] * sin, m[:, h:] * cos + m[:, :h] * sin])


def apply_rope(x, positions, base=10000.0):
    if x.shape[-1] % 2:
        raise ValueError("odd")
    L, d = x.shape[-2:]
    pos = np.fromiter((int(p) for p in positions), dtype=np.int64, count=L)
    theta = pos[:, None] * (1.0 / base ** (np.arange(0, d, 2, dtype=np.float64) / d))[None, :]
    cos, sin = np.cos(theta), np.sin(theta)
    flat = x.reshape(-1, L, d).astype(np.float64)
    res = np.stack([_rot(m, cos, sin) for m in flat]) if flat.shape[0] else flat
    return res.reshape(x.shape).astype(x.dtype)
