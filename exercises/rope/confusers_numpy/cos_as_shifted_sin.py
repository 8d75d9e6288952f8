"""Confuser: cos/sin from one np.sin call over [theta + pi/2, theta], the phase shifts stored as a
float32 array (pi/2 -> 1.5707964, off by 4.4e-8). Angles and products are float64 for float64 input;
the cos is off by a constant 4.4e-8 that does not grow with theta (a float32 table's error does).

Must not name: float32_table_for_float64, float32_cos_sin_for_float64, float32_internals, "float32 angle table"
"""
import numpy as np

PHASES = np.array([np.pi / 2, 0.0], dtype=np.float32)   # cos(t) = sin(t + pi/2)


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    half = d // 2
    inv = (base ** (-np.arange(0, d, 2) / d)).astype(work)
    theta = np.asarray(positions).astype(work)[:, None] * inv
    cs = np.sin(theta[None] + PHASES[:, None, None])                         # (2, L, d/2)
    c, s = cs[0], cs[1]
    xw = x.astype(work)
    x1, x2 = xw[..., :half], xw[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1).astype(x.dtype)
