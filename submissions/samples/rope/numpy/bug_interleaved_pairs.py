"""Bug: GPT-J / Meta LLaMA interleaved pairs (x[2i], x[2i+1]) instead of rotate_half.

Must fail: values
Mistake: interleaved_pairs
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    work = np.float64 if x.dtype == np.float64 else np.float32
    theta = np.asarray(positions).astype(work)[:, None] * (1.0 / work(base) ** (np.arange(0, d, 2, dtype=work) / d))
    xw = x.astype(work)
    x1, x2 = xw[..., 0::2], xw[..., 1::2]
    out = np.empty_like(xw)
    out[..., 0::2] = x1 * np.cos(theta) - x2 * np.sin(theta)
    out[..., 1::2] = x2 * np.cos(theta) + x1 * np.sin(theta)
    return out.astype(x.dtype)
