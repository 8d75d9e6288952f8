"""Bug: positions ignored; row r rotated as position r.

Must fail: cache_offset
Mistake: positions_restart
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    L, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    work = np.float64 if x.dtype == np.float64 else np.float32
    theta = np.arange(L, dtype=work)[:, None] * (1.0 / work(base) ** (np.arange(0, d, 2, dtype=work) / d))
    emb = np.concatenate([theta, theta], -1)
    xw = x.astype(work)
    rot = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], -1)
    return (xw * np.cos(emb) + rot * np.sin(emb)).astype(x.dtype)
