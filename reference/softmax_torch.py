"""Reference solution: numerically stable softmax (PyTorch track).

The same algorithm as ``reference/softmax.py``, in torch operations so that autograd differentiates
it: subtracting the maximum along the axis leaves the result unchanged (softmax is shift-invariant)
and keeps every exponent <= 0, so nothing overflows (Goodfellow, Bengio and Courville, *Deep
Learning*, section 4.1). Entries equal to ``-inf`` get probability 0; a slice that is entirely
``-inf`` has no finite maximum and is defined as all zeros. It computes in the input's dtype (a plain
implementation: its float16/bfloat16 error sets the tolerance of those cases).
"""

import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Softmax of ``x`` along ``axis``.

    Args:
        x: floating tensor of any shape (float16, bfloat16, float32 or float64).
        axis: the axis to normalise over; negative values count from the end.

    Returns:
        Tensor of the same shape and dtype as ``x``, non-negative, summing to 1 along ``axis``
        (all zeros for a slice whose entries are all ``-inf``); differentiable with respect to ``x``.
    """
    m = torch.amax(x, dim=axis, keepdim=True).detach()      # (..., 1, ...) largest logit (a constant shift)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # an all -inf slice: shift by 0
    e = torch.exp(x - m)                                     # same shape as x, every value in [0, 1]
    s = torch.sum(e, dim=axis, keepdim=True)                 # (..., 1, ...) normaliser
    safe = torch.where(s > 0, s, torch.ones_like(s))         # no 0/0, even in the branch not taken
    return torch.where(s > 0, e / safe, torch.zeros_like(e))  # all -inf slice -> zeros
