"""Wrong (PyTorch track): custom autograd.Function whose backward sums g*y over the whole tensor
(no dim/keepdim): the Jacobian-vector product mixes slices. Forward is right.

Must fail: gradients
Mistake: backward_sums_all_slices
"""
import torch


class _S(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, axis):
        m = x.amax(dim=axis, keepdim=True)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        e = torch.exp(x - m)
        s = e.sum(dim=axis, keepdim=True)
        y = e / torch.where(s > 0, s, torch.ones_like(s))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return y * (g - (g * y).sum()), None


def softmax(x, axis=-1):
    return _S.apply(x, axis)
