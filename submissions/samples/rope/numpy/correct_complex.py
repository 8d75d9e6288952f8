"""Correct: complex multiplication on (x[i], x[i + d/2]) pairs with NumPy's complex128, then back to real."""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError("odd d")
    h = d // 2
    theta = np.array(positions, dtype=np.float64)[:, None] * base ** (-2.0 * np.arange(h) / d)
    z = (x[..., :h].astype(np.float64) + 1j * x[..., h:].astype(np.float64)) * np.exp(1j * theta)
    return np.concatenate([z.real, z.imag], axis=-1).astype(x.dtype)
