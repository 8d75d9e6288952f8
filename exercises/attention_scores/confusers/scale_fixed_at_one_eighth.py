"""Confuser: the scale is hard-coded as 1/8, 1/sqrt(64), the d_k of the tutorial it was copied from
(d_k = 64 in "Attention Is All You Need"). Where d_k = 8 that is 1/d_k, so those cases look like
scores scaled by 1/d_k instead of 1/sqrt(d_k); where d_k = 64 it is right, and with any other d_k it
is neither. The cause is a constant, not the exponent of d_k.

Must not name: logits_divided_by_d_k, "1/d_k instead of 1/sqrt(d_k)"
"""
import numpy as np

SCALE = 1.0 / 8.0  # 1/sqrt(64): the mistake, d_k read from a tutorial instead of the input


def compute_attention_scores(query: np.ndarray, key: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Attention weights ``softmax(query @ key^T * scale)`` with masked keys excluded.

    Args:
        query: (..., L_q, d_k) array. key: (..., L_k, d_k) array.
        mask: None, or broadcastable to (..., L_q, L_k); nonzero / True means "may attend".

    Returns:
        (..., L_q, L_k) weights in the inputs' float dtype; a row with every key masked is 0.
    """
    query, key = np.asarray(query), np.asarray(key)
    scores = query @ np.swapaxes(key, -1, -2) * query.dtype.type(SCALE)     # (..., L_q, L_k)
    if mask is not None:
        allowed = np.asarray(mask) != 0
        scores = np.where(allowed, scores, -np.inf)
    m = np.max(scores, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(scores - m)
    s = np.sum(e, axis=-1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def scaled_dot_product_attention(query, key, value, mask=None):
    """(weights @ value, weights) of ``compute_attention_scores``: (..., L_q, d_v) and (..., L_q, L_k)."""
    w = compute_attention_scores(query, key, mask)
    return w @ np.asarray(value), w
