"""Correct: the angle table always built in float64 via exp(-2i/d * log(base)), cos/sin cast to the working dtype (float32 for half inputs), result via torch.addcmul."""
import math
import torch


def apply_rope(x, positions, base=10000.0):
    L, d = x.shape[-2], x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"odd feature size {d}")
    if isinstance(positions, torch.Tensor):
        pos = positions.to(torch.float64)
    else:
        pos = torch.tensor([float(p) for p in positions], dtype=torch.float64)
    i = torch.arange(d // 2, dtype=torch.float64)
    inv_freq = torch.exp(-(2.0 * i / d) * math.log(base))
    theta = pos.reshape(L, 1) * inv_freq.reshape(1, -1)
    theta = theta.repeat(1, 2)                                   # (L, d): [theta, theta]
    work = x.dtype if x.dtype in (torch.float32, torch.float64) else torch.float32
    cos, sin = theta.cos().to(work), theta.sin().to(work)
    xw = x.to(work)
    rot = torch.cat((xw[..., d // 2:].neg(), xw[..., : d // 2]), -1)
    return torch.addcmul(xw * cos, rot, sin).to(x.dtype)
