"""Correct (PyTorch track): axis moved last, the max detached (softmax is shift-invariant), row sums
by torch.einsum('...i->...i'), the denominator clamped at the dtype's smallest normal so an all -inf
slice gives 0/tiny = 0."""
import torch


def softmax(x, axis=-1):
    a = x.movedim(axis, -1)
    m = a.max(dim=-1, keepdim=True).values.detach()
    m = torch.nan_to_num(m, neginf=0.0)
    e = (a - m).exp()
    s = torch.einsum('...i->...', e).unsqueeze(-1).clamp_min(torch.finfo(x.dtype).tiny)
    return (e / s).movedim(-1, axis)
