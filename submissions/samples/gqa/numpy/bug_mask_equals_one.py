"""Bug: only mask entries equal to 1 may attend (`mask == 1`), where the contract says nonzero / True
may attend; a 0/1 mask hides it, a mask of 0 / 3 (or 0.5, -2.0) does not.

Must fail: masks
Mistake: mask_equals_one
"""

import math

import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("heads do not divide")
    d_k = D // num_query_heads
    g = num_query_heads // num_kv_heads
    q = (x @ W_q).reshape(B, L, num_query_heads, d_k).transpose(0, 2, 1, 3)
    k = np.repeat((x @ W_k).reshape(B, L, num_kv_heads, d_k).transpose(0, 2, 1, 3), g, axis=1)
    v = np.repeat((x @ W_v).reshape(B, L, num_kv_heads, d_k).transpose(0, 2, 1, 3), g, axis=1)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_k)
    if mask is not None:
        s = np.where(np.asarray(mask) == 1, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    w = np.divide(e, t, out=np.zeros_like(e), where=t > 0)
    return ((w @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ W_o).astype(x.dtype)
