"""Correct (PyTorch track): move the axis last, flatten to rows, compute in float64, cast back."""

import torch


def softmax(x, axis=-1):
    moved = torch.movedim(x, axis, -1)
    shape = moved.shape
    rows = moved.reshape(-1, shape[-1]).to(torch.float64)
    m = rows.max(dim=1, keepdim=True).values
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    e = (rows - m).exp()
    s = e.sum(dim=1, keepdim=True)
    p = torch.where(s > 0, e / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(e))
    return torch.movedim(p.reshape(shape), -1, axis).to(x.dtype)
