"""Correct (NumPy track): query heads reshaped to (H_kv, group) and attended by einsum without
copying K/V, in float64, cast back."""

import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads != 0:
        raise ValueError("D % num_query_heads != 0")
    if num_query_heads % num_kv_heads != 0:
        raise ValueError("num_query_heads % num_kv_heads != 0")
    d_k = D // num_query_heads
    g = num_query_heads // num_kv_heads
    x64 = x.astype(np.float64)
    q = (x64 @ W_q).reshape(B, L, num_kv_heads, g, d_k)
    k = (x64 @ W_k).reshape(B, L, num_kv_heads, d_k)
    v = (x64 @ W_v).reshape(B, L, num_kv_heads, d_k)
    s = np.einsum("bqhgd,bkhd->bhgqk", q, k) / np.sqrt(d_k)   # (B, H_kv, g, L, L)
    if mask is not None:
        keep = np.broadcast_to(np.asarray(mask) != 0, (B, num_query_heads, L, L))
        s = np.where(keep.reshape(B, num_kv_heads, g, L, L), s, -np.inf)
    m = s.max(-1, keepdims=True)
    m[~np.isfinite(m)] = 0.0
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    w = np.where(t > 0, e / np.where(t > 0, t, 1.0), 0.0)
    y = np.einsum("bhgqk,bkhd->bqhgd", w, v).reshape(B, L, D)
    return (y @ W_o).astype(x.dtype)
