"""Wrong (PyTorch track): computes in float32 and returns float32 whatever the input dtype.

Must fail: dtype_preserved
Mistake: computes_in_float32
"""

import torch


def softmax(x, axis=-1):
    x = x.float()
    m = x.amax(dim=axis, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(x - m)
    s = e.sum(dim=axis, keepdim=True)
    return torch.where(s > 0, e / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(e))
