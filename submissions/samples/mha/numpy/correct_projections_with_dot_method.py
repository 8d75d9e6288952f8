"""Correct: the projections are written with the ndarray.dot method (query.dot(W_q)), attention with
np.matmul. It lost flops_scaling while the method went past the FLOP counter (the projections' work
uncounted, the attention's counted: the counted work grew faster than the reference's). From a helper
hunt.
"""
import math
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError("D must be divisible by num_heads")
    H, d = num_heads, D // num_heads
    q = query.dot(W_q).reshape(B, L_q, H, d).transpose(0, 2, 1, 3)
    k = key.dot(W_k).reshape(B, L_k, H, d).transpose(0, 2, 1, 3)
    v = value.dot(W_v).reshape(B, L_k, H, d).transpose(0, 2, 1, 3)
    att = np.matmul(q, k.transpose(0, 1, 3, 2)) / np.asarray(math.sqrt(d), dtype=query.dtype)
    if mask is not None:
        att = np.where(np.asarray(mask) != 0, att, -np.inf)
    m = att.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(att.dtype)
    e = np.exp(att - m)
    s = e.sum(axis=-1, keepdims=True)
    att = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    y = np.matmul(att, v).transpose(0, 2, 1, 3).reshape(B, L_q, D)
    return y.dot(W_o).astype(query.dtype, copy=False)
