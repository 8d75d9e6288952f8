"""Correct: a custom autograd.Function for the softmax whose backward recomputes the probabilities
unguarded (0/0 on a fully masked row). The NaN stays in the gradient of the masked scores: masked_fill's
backward gives every filled position a zero gradient, so none reaches query or key, and the file gets
full marks (the softmax exercise, whose -inf logits are the input itself, fails the same backward).
"""

import math

import torch


class _SoftmaxLast(torch.autograd.Function):
    """Softmax over the last axis with a hand-written backward."""

    @staticmethod
    def forward(ctx, scores):
        m = torch.amax(scores, dim=-1, keepdim=True)                       # (..., L_q, 1)
        m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))         # all -inf row: shift by 0
        e = torch.exp(scores - m)                                          # (..., L_q, L_k)
        s = torch.sum(e, dim=-1, keepdim=True)                             # (..., L_q, 1)
        ctx.save_for_backward(scores)
        return e / torch.where(s > 0, s, torch.ones_like(s))              # all -inf row: 0 / 1 = 0

    @staticmethod
    def backward(ctx, grad):
        (scores,) = ctx.saved_tensors
        e = torch.exp(scores - torch.amax(scores, dim=-1, keepdim=True))   # wrong: -inf - (-inf) = NaN
        p = e / e.sum(dim=-1, keepdim=True)                                # (..., L_q, L_k)
        return p * (grad - (grad * p).sum(dim=-1, keepdim=True))


def _softmax_last(scores: torch.Tensor) -> torch.Tensor:
    return _SoftmaxLast.apply(scores)


def compute_attention_scores(query: torch.Tensor, key: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Attention weights ``softmax(query @ key^T / sqrt(d_k))`` with masked keys excluded.

    Args:
        query: ``(..., L_q, d_k)`` floating tensor.
        key: ``(..., L_k, d_k)``, same dtype; leading dimensions broadcast against query's.
        mask: optional, broadcastable to ``(..., L_q, L_k)``; bool or numeric, nonzero = may attend.

    Returns:
        ``(..., L_q, L_k)`` weights in the input dtype; each row sums to 1, or is all 0 when every
        key of that row is masked.

    Raises:
        ValueError: query and key disagree on ``d_k``.
    """
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query has d_k={query.shape[-1]} but key has d_k={key.shape[-1]}")
    d_k = query.shape[-1]
    scores = query @ key.transpose(-1, -2) / math.sqrt(d_k)                # (..., L_q, L_k)
    if mask is not None:
        allowed = torch.as_tensor(mask) != 0                                 # broadcastable to scores
        scores = scores.masked_fill(~allowed, float("-inf"))                 # (..., L_q, L_k)
    return _softmax_last(scores)


def scaled_dot_product_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                                 mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Scaled dot-product attention.

    Args:
        query: ``(..., L_q, d_k)``; key: ``(..., L_k, d_k)``; value: ``(..., L_k, d_v)``.
        mask: optional, broadcastable to ``(..., L_q, L_k)``, nonzero = may attend.

    Returns:
        ``(output, weights)``: ``(..., L_q, d_v)`` and ``(..., L_q, L_k)``, in the input dtype.

    Raises:
        ValueError: key and value disagree on ``L_k``, or query and key on ``d_k``.
    """
    if key.shape[-2] != value.shape[-2]:
        raise ValueError(f"key has L_k={key.shape[-2]} but value has L_k={value.shape[-2]}")
    weights = compute_attention_scores(query, key, mask)                    # (..., L_q, L_k)
    output = weights @ value                                                 # (..., L_q, d_v)
    return output, weights
