"""Confuser: the angle table is built in x's dtype (float64 for float64), then reduced modulo 2*pi
with 2*pi as a 0-dim torch.tensor, which is float32 by default (6.2831855, off by 1.7e-7): each
angle drifts by floor(theta / 2pi) * 1.7e-7. No table is float32; the period constant is.

Must not name: float32_table_for_float64, float32_internals, "float32 angle table"
"""
import math
import torch

TWO_PI = torch.tensor(2 * math.pi)  # range reduction keeps cos/sin arguments small


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
    half = d // 2
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)               # (d/2,)
    pos = torch.as_tensor(positions).to(work)                                  # (L,)
    theta = torch.remainder(pos[:, None] * inv_freq[None, :], TWO_PI)          # (L, d/2)
    emb = torch.cat([theta, theta], dim=-1)
    cos, sin = emb.cos(), emb.sin()
    xw = x.to(work)
    rot = torch.cat([-xw[..., half:], xw[..., :half]], dim=-1)
    return (xw * cos + rot * sin).to(x.dtype)
