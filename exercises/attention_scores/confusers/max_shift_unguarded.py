"""Confuser: the textbook stable softmax with no guard: a fully masked row's max is -inf, x - max is
-inf - (-inf) = NaN before any division. The bank's nan_fully_masked_rows said "(0/0)"; its sentence
now names both ways.

Must not name: "gave NaN (0/0)"
May name: nan_fully_masked_rows, "a query row whose keys are all masked"
"""
import math

import numpy as np


def _softmax_last(scores: np.ndarray) -> np.ndarray:
    """Stable softmax over the last axis; an all -inf row gives zeros."""
    m = np.max(scores, axis=-1, keepdims=True)                      # (..., L_q, 1)
    e = np.exp(scores - m)                                          # (..., L_q, L_k)
    s = np.sum(e, axis=-1, keepdims=True)                           # (..., L_q, 1)
    return e / s                                                    # (..., L_q, L_k)


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
    if mask is not None:
        allowed = np.asarray(mask) != 0                             # broadcastable to scores
        scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)
    return _softmax_last(scores).astype(query.dtype, copy=False)


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
