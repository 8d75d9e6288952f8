"""Confuser: the scores are multiplied by the 0/1 mask, so a masked key keeps a score of 0 (weight exp(0)).
Its output is mask_filled_with_tiny_positive's (a fill of 1e-9), so that name may be given, but its
sentence must lead with what the replay proves (masked keys kept a score of about 0), not with a
1e-9 fill. From a confuser hunt.

Must not name: mask_ignored, mask_polarity_inverted, mask_equals_one
May name: mask_filled_with_tiny_positive
"""

import math

import torch


def _softmax_last(scores: torch.Tensor) -> torch.Tensor:
    """Stable softmax over the last axis; an all -inf row gives zeros (and zero gradients)."""
    m = torch.amax(scores, dim=-1, keepdim=True).detach()                # (..., L_q, 1)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(scores - m)                                             # (..., L_q, L_k)
    s = torch.sum(e, dim=-1, keepdim=True)                                # (..., L_q, 1)
    safe = torch.where(s > 0, s, torch.ones_like(s))
    return torch.where(s > 0, e / safe, torch.zeros_like(e))             # (..., L_q, L_k)


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
        scores = scores * allowed.to(scores.dtype)                         # mask multiplies the scores
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
