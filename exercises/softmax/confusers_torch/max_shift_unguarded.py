"""Confuser: the textbook stable softmax with no guard for a slice that is entirely -inf. Its
maximum is -inf, so x - max is -inf - (-inf) = NaN before any division: the NaN comes from the
shift, not from 0/0 (the exponentials are NaN, not 0).

Must not name: "gave NaN (0/0)"
May name: nan_all_neg_inf, nan_gradient_all_neg_inf, "entirely -inf gave NaN"
"""
import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    e = torch.exp(x - torch.amax(x, dim=axis, keepdim=True))
    return e / e.sum(dim=axis, keepdim=True)
