"""Confuser: a custom autograd.Function whose forward pass is right (a slice that is entirely -inf
gives zeros, no NaN is ever computed there) while its backward pass recomputes the probabilities as
exp(x - max) / sum without the forward's guard, so on such a slice it computes 0/0 itself. The gradient
is NaN exactly in the all -inf slices, as when a NaN of the forward pass is hidden with torch.where or
nan_to_num; here the forward hides nothing, the backward makes the NaN.

Must not name: "replaced in the forward pass", "the forward pass hides"
May name: nan_gradient_all_neg_inf, "computed for that slice on the way to the gradient"
"""
import torch


class _Softmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, axis):
        work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        m = work.amax(axis, keepdim=True)
        m = torch.where(torch.isneginf(m), torch.zeros_like(m), m)       # finite shift: no -inf - -inf
        e = torch.exp(work - m)
        s = e.sum(axis, keepdim=True)
        y = e / torch.where(s > 0, s, torch.ones_like(s))                # an all -inf slice: 0 / 1 = 0
        ctx.save_for_backward(x)
        ctx.axis = axis
        return y.to(x.dtype)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        work = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
        e = torch.exp(work - work.amax(ctx.axis, keepdim=True))          # wrong: -inf - (-inf) = NaN
        y = e / e.sum(ctx.axis, keepdim=True)
        gf = g.to(y.dtype)
        dx = y * (gf - (gf * y).sum(ctx.axis, keepdim=True))
        return dx.to(x.dtype), None


def softmax(x, axis=-1):
    return _Softmax.apply(x, axis)
