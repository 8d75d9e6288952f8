"""Correct: scores with np.einsum over any leading dimensions, masked with np.where, weights as
exp(scores - logsumexp) (fully masked rows: logsumexp = -inf, weights set to 0), inputs first passed
through np.asarray and astype (as ordinary code does)."""

import numpy as np


def compute_attention_scores(query, key, mask=None):
    query = np.asarray(query)
    key = np.asarray(key)
    dtype = np.result_type(query, key)
    d_k = query.shape[-1]
    scores = np.einsum("...qd,...kd->...qk", query, key) / np.sqrt(d_k).astype(dtype)
    if mask is not None:
        keep = np.asarray(mask) != 0
        scores = np.where(keep, scores, -np.inf)
    top = np.max(scores, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    lse = np.log(np.sum(np.exp(scores - top), axis=-1, keepdims=True)) + top
    with np.errstate(invalid="ignore"):
        weights = np.exp(scores - lse)
    weights = np.where(np.isfinite(lse), weights, 0.0)
    return weights.astype(dtype, copy=False)


def scaled_dot_product_attention(query, key, value, mask=None):
    weights = compute_attention_scores(query, key, mask)
    output = np.einsum("...qk,...kd->...qd", weights, np.asarray(value)).astype(weights.dtype, copy=False)
    return output, weights
