"""Confuser: angles, cos/sin and products in float64 for float64 input, but written into an output
buffer preallocated as float32 (meant for float16 input), then cast to x's dtype: the float64 table
is right; the result is rounded to float32 once at the end.

Must not name: float32_table_for_float64, float32_cos_sin_for_float64, "float32 angle table"
May name: float32_internals
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    half = d // 2
    work = np.float64 if x.dtype == np.float64 else np.float32
    inv = 1.0 / base ** (np.arange(half, dtype=work) * 2 / d)
    theta = np.asarray(positions).astype(work)[:, None] * inv
    c, s = np.cos(theta), np.sin(theta)
    x1, x2 = x[..., :half].astype(work), x[..., half:].astype(work)
    out = np.empty(x.shape, dtype=np.float32)                              # working buffer
    out[..., :half] = x1 * c - x2 * s
    out[..., half:] = x2 * c + x1 * s
    return out.astype(x.dtype)
