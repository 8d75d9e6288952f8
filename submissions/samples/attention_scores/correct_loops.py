"""Correct: explicit Python loops over every query row (slow, plain, and right)."""
import math

import numpy as np


def _row_softmax(row):
    finite = row[np.isfinite(row)]
    if finite.size == 0:
        return np.zeros_like(row)
    e = np.exp(row - finite.max())
    return e / e.sum()


def compute_attention_scores(query, key, mask=None):
    q, k = np.broadcast_arrays(query[..., :, None, :], key[..., None, :, :])
    scores = (q * k).sum(axis=-1) / math.sqrt(query.shape[-1])
    if mask is not None:
        m = np.broadcast_to(np.asarray(mask) != 0, scores.shape)
        scores = np.where(m, scores, -np.inf)
    out = np.empty_like(scores)
    flat_in, flat_out = scores.reshape(-1, scores.shape[-1]), out.reshape(-1, scores.shape[-1])
    for i in range(flat_in.shape[0]):
        flat_out[i] = _row_softmax(flat_in[i])
    return out


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return np.matmul(w, value), w
