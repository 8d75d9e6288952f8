"""Wrong (PyTorch track): shifts the input in place (x.sub_), modifying the caller's tensor.

Must fail: input_unchanged
Mistake: inplace
"""

import torch


def softmax(x, axis=-1):
    with torch.no_grad():
        m = x.amax(dim=axis, keepdim=True)
        x.sub_(torch.where(torch.isfinite(m), m, torch.zeros_like(m)))
    e = torch.exp(x)
    s = e.sum(dim=axis, keepdim=True)
    return torch.where(s > 0, e / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(e))
