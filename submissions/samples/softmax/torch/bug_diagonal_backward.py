"""Wrong (PyTorch track): a hand-written autograd Function whose backward keeps only the diagonal of
the softmax Jacobian (grad * p), forgetting the - p * sum(grad * p) term. Values are right.

Must fail: gradients
Mistake: diagonal_jacobian_backward
"""

import torch


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, axis):
        m = x.amax(dim=axis, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        e = torch.exp(x - m)
        s = e.sum(dim=axis, keepdim=True)
        p = torch.where(s > 0, e / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(e))
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        return grad * p, None


def softmax(x, axis=-1):
    return _Softmax.apply(x, axis)
