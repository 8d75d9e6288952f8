"""Wrong (PyTorch track): the forward pass is right everywhere, fully -inf slices included, but the
NaN of an all -inf slice (exp(-inf - (-inf)), then 0/0) is zeroed afterwards with torch.where, and
torch.where still sends the NaN backward: the gradient of x is NaN in that slice (the reference's is 0).

Must fail: gradients
Mistake: nan_gradient_all_neg_inf
"""

import torch


def softmax(x, axis=-1):
    m = x.amax(axis, keepdim=True)
    e = torch.exp(x - m)
    y = e / e.sum(axis, keepdim=True)
    return torch.where(torch.isnan(y), torch.zeros_like(y), y)
