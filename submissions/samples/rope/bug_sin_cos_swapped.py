"""Bug: x * sin(theta) + rotate_half(x) * cos(theta).

Must fail: values
Mistake: sin_cos_swapped
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv
    emb = torch.cat([theta, theta], -1)
    xw = x.to(work)
    rot = torch.cat([-xw[..., d // 2:], xw[..., : d // 2]], -1)
    return (xw * emb.sin() + rot * emb.cos()).to(x.dtype)
