"""Wrong (PyTorch track): stable, but an all -inf slice gives NaN (-inf - -inf, then 0/0).

Must fail: all_neg_inf
Mistake: nan_all_neg_inf
"""

import torch


def softmax(x, axis=-1):
    e = torch.exp(x - x.amax(dim=axis, keepdim=True))
    return e / e.sum(dim=axis, keepdim=True)
