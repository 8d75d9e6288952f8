"""Bug: the angle table and its cos/sin are always float32, also for float64 x.

Must fail: float64
Mistake: float32_cos_sin_for_float64
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    theta = np.asarray(positions).astype(np.float32)[:, None] * (
        np.float32(1.0) / np.float32(base) ** (np.arange(0, d, 2, dtype=np.float32) / np.float32(d)))
    emb = np.concatenate([theta, theta], -1)
    rot = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], -1)
    return (x * np.cos(emb).astype(x.dtype) + rot * np.sin(emb).astype(x.dtype)).astype(x.dtype)
