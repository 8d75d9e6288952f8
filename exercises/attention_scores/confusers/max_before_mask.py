"""Confuser: the softmax's max is taken over the raw scores, before the mask, and masked scores are set
to -inf after the shift; a row whose masked scores are far above its kept ones underflows every kept
exp to 0, so the row is 0/0 = NaN although it keeps keys (and a fully masked row is NaN too). The
NaN rows are not all fully masked, so "a fully masked row" is not the cause to name.

Must not name: "a query row whose keys are all masked", "fully masked"
"""
import math

import numpy as np


def _softmax_last(scores: np.ndarray, allowed) -> np.ndarray:
    """Softmax over the last axis, shifted by the max of the unmasked scores; masked entries dropped
    after the shift."""
    m = np.max(scores, axis=-1, keepdims=True)                      # (..., L_q, 1): masked scores too
    shifted = scores - m
    if allowed is not None:
        shifted = np.where(allowed, shifted, -np.inf)               # masked after the max
    with np.errstate(under="ignore"):
        e = np.exp(shifted)                                         # (..., L_q, L_k)
    s = np.sum(e, axis=-1, keepdims=True)                           # (..., L_q, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return e / s


def compute_attention_scores(query: np.ndarray, key: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Attention weights ``softmax(query @ key^T / sqrt(d_k))`` with masked keys excluded.

    Args:
        query: ``(..., L_q, d_k)`` float32 or float64.
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
    scores = query @ np.swapaxes(key, -1, -2) / math.sqrt(d_k)     # (..., L_q, L_k)
    allowed = None if mask is None else np.asarray(mask) != 0       # broadcastable to scores
    return _softmax_last(scores, allowed).astype(query.dtype, copy=False)


def scaled_dot_product_attention(query: np.ndarray, key: np.ndarray, value: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
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
    weights = compute_attention_scores(query, key, mask)            # (..., L_q, L_k)
    output = weights @ value                                        # (..., L_q, d_v)
    return output, weights
