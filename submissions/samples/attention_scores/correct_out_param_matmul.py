"""Correct: key transposed into a contiguous buffer (np.ascontiguousarray), scores written by
np.matmul(out=) into a preallocated array of the broadcast shape, scaled in place, masked with a
finite float min (np.finfo) and exactly zeroed afterwards for fully masked rows."""
import numpy as np


def compute_attention_scores(query, key, mask=None):
    kt = np.ascontiguousarray(np.swapaxes(key, -1, -2))
    shape = np.broadcast_shapes(query.shape[:-2], key.shape[:-2]) + (query.shape[-2], key.shape[-2])
    s = np.empty(shape, dtype=query.dtype)
    np.matmul(query, kt, out=s)
    s *= query.dtype.type(1.0 / np.sqrt(query.shape[-1]))
    if mask is not None:
        allowed = np.broadcast_to(np.asarray(mask).astype(bool), shape)
        s = np.where(allowed, s, np.finfo(s.dtype).min)
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    if mask is not None:
        s[~allowed] = 0
    return s


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
