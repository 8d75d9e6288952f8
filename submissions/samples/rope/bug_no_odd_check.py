"""Bug: no check on d; an odd d silently drops a feature from the rotation and returns a wrong tensor.

Must fail: odd_d
Mistake: no_odd_check
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    h = d // 2
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = 1.0 / base ** (torch.arange(0, 2 * h, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv
    xw = x.to(work)
    x1, x2 = xw[..., :h], xw[..., h:2 * h]
    out = torch.cat([x1 * theta.cos() - x2 * theta.sin(), x2 * theta.cos() + x1 * theta.sin(), xw[..., 2 * h:]], -1)
    return out.to(x.dtype)
