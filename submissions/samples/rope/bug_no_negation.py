"""Bug: rotate_half without the minus sign ([x2, x1]): not a rotation, so scores depend on absolute positions.

Must fail: relative_position
Mistake: rotate_half_no_minus
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
    rot = torch.cat([xw[..., d // 2:], xw[..., : d // 2]], -1)
    return (xw * emb.cos() + rot * emb.sin()).to(x.dtype)
