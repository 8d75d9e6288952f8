"""Correct (NumPy track): query heads reshaped to (B, H_kv, group, L, d_k) and K/V given a size-1
group axis, so plain @ broadcasting shares each KV head with its group (no copy of K/V)."""
import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads:
        raise ValueError("D must be divisible by num_query_heads")
    if num_query_heads % num_kv_heads:
        raise ValueError("num_query_heads must be divisible by num_kv_heads")
    Hq, Hkv = num_query_heads, num_kv_heads
    d, g = D // Hq, Hq // Hkv
    q = (x @ W_q).reshape(B, L, Hkv, g, d).transpose(0, 2, 3, 1, 4)     # (B, Hkv, g, L, d)
    k = (x @ W_k).reshape(B, L, Hkv, d).transpose(0, 2, 1, 3)[:, :, None]  # (B, Hkv, 1, L, d)
    v = (x @ W_v).reshape(B, L, Hkv, d).transpose(0, 2, 1, 3)[:, :, None]
    s = (q @ np.swapaxes(k, -1, -2)) / np.sqrt(d).astype(x.dtype)        # (B, Hkv, g, L, L)
    if mask is not None:
        m = np.broadcast_to(np.asarray(mask) != 0, (B, Hq, L, L)).reshape(B, Hkv, g, L, L)
        s = np.where(m, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    e = np.exp(s - top)
    z = e.sum(-1, keepdims=True)
    w = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    y = (w @ v).transpose(0, 3, 1, 2, 4).reshape(B, L, D)
    return (y @ W_o).astype(x.dtype)
