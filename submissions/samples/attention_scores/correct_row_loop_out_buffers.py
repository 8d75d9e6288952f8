"""Correct: one query row at a time into preallocated buffers (np.empty, ufuncs with out=, np.dot
on 2-D slices), a hand-written softmax per row; leading dimensions flattened with reshape. Work is
still O(L_q * L_k * d) per matrix: each row is computed once."""

import math

import numpy as np


def _weights_2d(q, k, keep, out):
    # q: (L_q, d), k: (L_k, d), keep: (L_q, L_k) bool or None, out: (L_q, L_k)
    scale = 1.0 / math.sqrt(q.shape[-1])
    for i in range(q.shape[0]):
        row = out[i]
        np.dot(k, q[i], out=row)
        np.multiply(row, scale, out=row)
        if keep is not None:
            row[~keep[i]] = -np.inf
        top = row.max()
        if not np.isfinite(top):
            row[:] = 0.0
            continue
        np.subtract(row, top, out=row)
        np.exp(row, out=row)
        np.divide(row, row.sum(), out=row)
    return out


def compute_attention_scores(query, key, mask=None):
    lead = np.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    if mask is not None:
        lead = np.broadcast_shapes(lead, np.shape(mask)[:-2])
    L_q, L_k = query.shape[-2], key.shape[-2]
    dtype = np.result_type(query.dtype, key.dtype)
    q = np.broadcast_to(query, lead + query.shape[-2:]).reshape(-1, L_q, query.shape[-1])
    k = np.broadcast_to(key, lead + key.shape[-2:]).reshape(-1, L_k, key.shape[-1])
    keep = None
    if mask is not None:
        keep = np.broadcast_to(np.asarray(mask) != 0, lead + (L_q, L_k)).reshape(-1, L_q, L_k)
    out = np.empty((q.shape[0], L_q, L_k), dtype=dtype)
    for b in range(q.shape[0]):
        _weights_2d(q[b], k[b], None if keep is None else keep[b], out[b])
    return out.reshape(lead + (L_q, L_k))


def scaled_dot_product_attention(query, key, value, mask=None):
    weights = compute_attention_scores(query, key, mask)
    return np.matmul(weights, value).astype(weights.dtype, copy=False), weights
