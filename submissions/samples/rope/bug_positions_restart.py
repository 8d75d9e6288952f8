"""Bug: ignores the positions argument and rotates row r as position r (forgets the cache offset).

Must fail: cache_offset
Mistake: positions_restart
"""
import torch


def apply_rope(x, positions, base=10000.0):
    L, d = x.shape[-2:]
    if d % 2:
        raise ValueError("odd d")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.arange(L, dtype=work)[:, None] * inv
    emb = torch.cat([theta, theta], -1)
    xw = x.to(work)
    rot = torch.cat([-xw[..., d // 2:], xw[..., : d // 2]], -1)
    return (xw * emb.cos() + rot * emb.sin()).to(x.dtype)
