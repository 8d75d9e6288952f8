"""Baseline (PyTorch track): softmax as exp(x - logsumexp(x)), as ``torch.logsumexp`` users write it.

Correct, but in low precision its exponent ``x - lse`` carries the rounding error of ``lse``, which
the max-subtraction reference does not make. It runs on the host only, beside the reference, so
that the tolerance covers the error of this standard formulation too (see ``grader.judge.tolerance``).
"""

import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    """Softmax of ``x`` along ``axis`` (same shape and dtype; zeros for an all -inf slice)."""
    empty = torch.isneginf(x).all(dim=axis, keepdim=True)            # (..., 1, ...) an all -inf slice
    xs = torch.where(empty, torch.zeros_like(x), x)                  # no logsumexp of an all -inf slice:
    lse = torch.logsumexp(xs, dim=axis, keepdim=True)                # its backward would be NaN (0 * inf)
    out = torch.exp(xs - lse)                                        # same shape as x
    return torch.where(empty, torch.zeros_like(out), out)            # all -inf slice -> zeros, gradient 0
