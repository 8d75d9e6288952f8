"""Correct: weights as exp(scores - logaddexp.reduce(scores)) in log space, masked keys set to -inf
through np.putmask on a private copy, fully masked rows (log-normaliser -inf) set to zero."""
import numpy as np


def compute_attention_scores(query, key, mask=None):
    q = np.asarray(query)
    s = np.matmul(q, np.swapaxes(np.asarray(key), -1, -2))
    s = s / np.sqrt(q.shape[-1]).astype(q.dtype)
    if mask is not None:
        s = np.array(np.broadcast_to(s, np.broadcast_shapes(s.shape, np.shape(mask))), copy=True)
        np.putmask(s, np.broadcast_to(np.logical_not(mask), s.shape), -np.inf)
    lse = np.logaddexp.reduce(s, axis=-1, keepdims=True)
    dead = np.isneginf(lse)
    with np.errstate(invalid="ignore"):
        w = np.exp(s - np.where(dead, 0, lse))
    return np.where(dead, 0, w).astype(q.dtype)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return np.matmul(w, value), w
