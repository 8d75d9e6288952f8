"""Bug: only mask entries equal to 1 may attend (`mask == 1`), where the contract says nonzero / True
may attend; a 0/1 mask hides it, a mask of 0 / 3 (or 0.5, -2.0) does not.

Must fail: mask_numeric
Mistake: mask_equals_one
"""
import numpy as np


def compute_attention_scores(query, key, mask=None):
    d_k = query.shape[-1]
    scores = np.einsum("...qd,...kd->...qk", query, key) / np.sqrt(d_k).astype(query.dtype)
    if mask is not None:
        allowed = np.broadcast_to(np.asarray(mask) == 1, scores.shape)
        scores = np.where(allowed, scores, np.finfo(scores.dtype).min)
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    if mask is not None:
        weights = np.where(allowed, weights, 0.0).astype(query.dtype)
        row_ok = allowed.any(axis=-1, keepdims=True)
        weights = np.where(row_ok, weights, 0.0).astype(query.dtype)
    return weights


def scaled_dot_product_attention(query, key, value, mask=None):
    weights = compute_attention_scores(query, key, mask)
    return np.einsum("...qk,...kv->...qv", weights, value), weights
