"""Correct (NumPy track): reshape + np.swapaxes for the heads, scores scaled in place, masked keys
set with boolean indexing on a private broadcast copy, exp/normalise through ufuncs with out=."""
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    d_k = D // num_heads
    split = lambda x, L: np.swapaxes(x.reshape(B, L, num_heads, d_k), 1, 2)
    q, k, v = split(query @ W_q, L_q), split(key @ W_k, L_k), split(value @ W_v, L_k)
    s = np.matmul(q, np.swapaxes(k, -1, -2))
    s *= s.dtype.type(1 / np.sqrt(d_k))
    if mask is not None:
        blocked = np.broadcast_to(np.asarray(mask) == 0, s.shape).copy()
        s[blocked] = -np.inf
        rows_dead = blocked.all(axis=-1, keepdims=True)
        s[np.broadcast_to(rows_dead, s.shape)] = 0
    else:
        rows_dead = np.zeros(s.shape[:-1] + (1,), bool)
    np.subtract(s, s.max(axis=-1, keepdims=True), out=s)
    np.exp(s, out=s)
    np.divide(s, s.sum(axis=-1, keepdims=True), out=s)
    s[np.broadcast_to(rows_dead, s.shape)] = 0
    ctx = np.swapaxes(s @ v, 1, 2).reshape(B, L_q, D)
    return ctx @ W_o
