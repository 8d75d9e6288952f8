"""Confuser: inv_freq = base^(-2i/d) is right (minus sign present), but theta is formed by
dividing by it (positions / inv_freq, as if it were the wavelength 10000^(2i/d)). The output is
that of exponent_sign_lost (base^(+2i/d)) everywhere, but the exponent's sign is not what is wrong.

Must not name: "minus sign was lost"
May name: exponent_sign_lost
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    half = d // 2
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    theta = (np.asarray(positions, dtype=np.float64)[:, None] / inv_freq).astype(work)
    c, s = np.cos(theta), np.sin(theta)
    xw = x.astype(work)
    x1, x2 = xw[..., :half], xw[..., half:]
    return np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1).astype(x.dtype)
