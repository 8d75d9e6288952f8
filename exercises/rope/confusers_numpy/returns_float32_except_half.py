"""Confuser: right rotation, float64 input rotated in float64 throughout, but the result is returned
as float32 for every input except float16 (cast back): float64 in, float32 out.

Must not name: float32_table_for_float64, float32_cos_sin_for_float64, "float32 angle table"
May name: returns_float64, not_cast_back
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    half = d // 2
    inv = (base ** (-np.arange(0, d, 2) / d)).astype(work)
    theta = np.asarray(positions).astype(work)[:, None] * inv
    c, s = np.cos(theta), np.sin(theta)
    xw = x.astype(work)
    x1, x2 = xw[..., :half], xw[..., half:]
    out = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    return out.astype(np.float16 if x.dtype == np.float16 else np.float32)
