"""Correct: an explicit (L, d, d) block-rotation matrix applied with einsum."""
import torch


def apply_rope(x, positions, base=10000.0):
    L, d = x.shape[-2:]
    if d % 2:
        raise ValueError("d odd")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    h = d // 2
    theta = torch.as_tensor(positions).to(work)[:, None] * torch.pow(torch.tensor(base, dtype=work),
                                                                     -torch.arange(0, d, 2, dtype=work) / d)
    c, s = torch.cos(theta), torch.sin(theta)
    R = torch.zeros(L, d, d, dtype=work)
    idx = torch.arange(h)
    R[:, idx, idx] = c
    R[:, idx + h, idx + h] = c
    R[:, idx, idx + h] = -s
    R[:, idx + h, idx] = s
    return torch.einsum("lij,...lj->...li", R, x.to(work)).to(x.dtype)
