"""Correct: scores by query @ swapaxes(key), max shift over allowed keys only (np.max with where=
and initial=-inf), the mask applied multiplicatively after exp, division only where the row sum is
positive."""
import numpy as np


def compute_attention_scores(query, key, mask=None):
    d_k = query.shape[-1]
    scores = (query @ np.swapaxes(key, -1, -2)) * query.dtype.type(1.0 / np.sqrt(d_k))
    if mask is None:
        allowed = np.ones(scores.shape, dtype=bool)
    else:
        allowed = np.broadcast_to(np.asarray(mask) != 0, scores.shape)
    top = np.max(scores, axis=-1, keepdims=True, where=allowed, initial=-np.inf)
    top = np.where(np.isfinite(top), top, 0).astype(scores.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(np.where(allowed, scores - top, -np.inf)) * allowed
    s = e.sum(axis=-1, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
