"""Correct: works in float64 internally, additive -1e9 mask bias, cast back at the end."""
import numpy as np


def compute_attention_scores(query, key, mask=None):
    q = query.astype(np.float64)
    k = key.astype(np.float64)
    s = q @ k.swapaxes(-1, -2) * (q.shape[-1] ** -0.5)
    if mask is not None:
        keep = (np.asarray(mask) != 0)
        s = s + np.where(keep, 0.0, -1e9)
    s -= s.max(-1, keepdims=True)
    w = np.exp(s)
    w /= w.sum(-1, keepdims=True)
    if mask is not None:
        keep = np.broadcast_to(keep, w.shape)
        w = np.where(keep.any(-1, keepdims=True), w, 0.0)
    return w.astype(query.dtype)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return (w.astype(np.float64) @ value.astype(np.float64)).astype(query.dtype), w
