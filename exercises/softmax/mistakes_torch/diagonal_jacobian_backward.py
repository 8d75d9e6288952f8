"""a hand-written backward kept only the diagonal of the softmax Jacobian (grad * p) and dropped the - p * sum(grad * p) term: the values are right, the gradient is not (d softmax_i / d x_j = p_i (delta_ij - p_j)).

Must fail: gradients

A whole module, not a patch: the mistake lives in a ``torch.autograd.Function`` whose forward is the
reference's softmax (the Jacobian of softmax: Goodfellow, Bengio and Courville, *Deep Learning*,
section 6.2.2.3).
"""

import torch


class _Softmax(torch.autograd.Function):
    """Forward: the reference's stable softmax; backward: ``grad * p`` (the diagonal term only)."""

    @staticmethod
    def forward(ctx, x, axis):
        m = torch.amax(x, dim=axis, keepdim=True)                # (..., 1, ...) largest logit
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
        e = torch.exp(x - m)                                     # same shape as x
        s = torch.sum(e, dim=axis, keepdim=True)                 # (..., 1, ...) normaliser
        safe = torch.where(s > 0, s, torch.ones_like(s))
        p = torch.where(s > 0, e / safe, torch.zeros_like(e))    # all -inf slice -> zeros
        ctx.save_for_backward(p)
        return p

    @staticmethod
    def backward(ctx, grad):
        (p,) = ctx.saved_tensors
        return grad * p, None                                    # missing: - p * sum(grad * p, axis)


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Softmax of ``x`` along ``axis`` with the diagonal-only backward."""
    return _Softmax.apply(x, axis)
