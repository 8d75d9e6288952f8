"""Wrong (PyTorch track): exp(x - logsumexp(x)), with the all -inf slice mapped to zeros. The forward
pass is right everywhere, but torch.logsumexp of an all -inf slice differentiates to
exp(x - lse) = exp(-inf - (-inf)) = NaN, and the torch.where that hides the slice in the forward pass
multiplies that NaN by 0 in the backward one: the gradient of x is NaN there (the reference's is 0).

Must fail: gradients
Mistake: nan_gradient_all_neg_inf
"""

import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    lse = torch.logsumexp(x, dim=axis, keepdim=True)
    ok = lse > float("-inf")
    return torch.where(ok, torch.exp(x - torch.where(ok, lse, torch.zeros_like(lse))), torch.zeros_like(x))
