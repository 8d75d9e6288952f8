"""Wrong (PyTorch track): -inf replaced by -1e9 (masked_fill) before a max-shifted softmax: an all
-inf slice becomes uniform instead of zeros.

Must fail: all_neg_inf, half_precision
Mistake: neg_inf_filled_minus_1e9
"""
import torch


def softmax(x, axis=-1):
    x = x.masked_fill(torch.isneginf(x), -1e9)
    m = x.amax(dim=axis, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(dim=axis, keepdim=True)
