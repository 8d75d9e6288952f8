"""Correct: everything in float64 whatever the input, then cast back (more accurate than asked)."""
import math

import torch


def apply_rope(x, positions, base=10000.0):
    L, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    pos = torch.as_tensor(positions, dtype=torch.float64)
    i = torch.arange(d // 2, dtype=torch.float64)
    theta = pos.reshape(L, 1) * torch.exp(-2.0 * i * math.log(base) / d)
    theta = torch.cat([theta, theta], dim=-1)
    x64 = x.double()
    x_rot = torch.cat([-x64[..., d // 2:], x64[..., : d // 2]], dim=-1)
    return (x64 * torch.cos(theta) + x_rot * torch.sin(theta)).to(x.dtype)
