"""Confuser: the angle table is built in float64 for float64 input, then reduced modulo 2*pi with
2*pi stored as np.float32 (6.2831855, off by 1.7e-7): each angle drifts by floor(theta/2pi)*1.7e-7.
No angle table or cos/sin is float32; only the period constant is.

Must not name: float32_table_for_float64, float32_cos_sin_for_float64, float32_internals, "float32 angle table"
"""
import numpy as np

TWO_PI = np.float32(2 * np.pi)


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    half = d // 2
    inv = (base ** (-np.arange(0, d, 2) / d)).astype(work)
    theta = np.asarray(positions).astype(work)[:, None] * inv               # (L, d/2)
    theta = np.remainder(theta, TWO_PI)                                      # keep arguments small
    c, s = np.cos(theta), np.sin(theta)
    xw = x.astype(work)
    x1, x2 = xw[..., :half], xw[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1).astype(x.dtype)
