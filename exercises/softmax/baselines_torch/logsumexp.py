"""Baseline (PyTorch track): softmax as exp(x - logsumexp(x)), as ``torch.logsumexp`` users write it.

Correct, but in low precision its exponent ``x - lse`` carries the rounding error of ``lse``, which
the max-subtraction reference does not make. It runs on the host only, beside the reference, so
that the tolerance covers the error of this standard formulation too (see ``grader.judge.tolerance``).
"""

import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Softmax of ``x`` along ``axis`` (same shape and dtype; zeros for an all -inf slice)."""
    lse = torch.logsumexp(x, dim=axis, keepdim=True)                 # (..., 1, ...) in x.dtype
    finite = torch.isfinite(lse)
    out = torch.exp(x - torch.where(finite, lse, torch.zeros_like(lse)))
    return torch.where(finite, out, torch.zeros_like(out))
