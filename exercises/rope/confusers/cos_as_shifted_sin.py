"""Confuser: one sin call for both tables: cos(theta) = sin(theta + pi/2), with pi/2 kept as a
float32 tensor constant (1.5707964, off by 4.4e-8). Every angle, table and product is in x's
dtype (float64 for float64); only the phase constant is float32, so the float64 cos is off by a
constant 4.4e-8 (not growing with theta, as a float32 table's error does).

Must not name: float32_table_for_float64, float32_internals, "float32 angle table"
"""
import math
import torch

HALF_PI = torch.tensor(math.pi / 2)


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv_freq
    emb = torch.cat([theta, theta], -1)
    both = torch.sin(torch.stack([emb + HALF_PI, emb]))                        # (2, L, d)
    cos, sin = both[0], both[1]
    xw = x.to(work)
    h = d // 2
    rot = torch.cat([-xw[..., h:], xw[..., :h]], -1)
    return (xw * cos + rot * sin).to(x.dtype)
