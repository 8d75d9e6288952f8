"""Correct (NumPy track): a list comprehension over KV heads, each attending its group of query heads
at once (a (B, group, L, d) block against one (B, L, d) K/V), results stacked with np.stack."""
import math

import numpy as np


def _attend(q, k, v, allowed):
    s = q @ k[:, None].swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    if allowed is not None:
        s = np.where(allowed, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    e = np.exp(s - top)
    z = e.sum(-1, keepdims=True)
    return np.divide(e, z, out=np.zeros_like(e), where=z > 0) @ v[:, None]


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("head counts do not divide")
    d, g = D // num_query_heads, num_query_heads // num_kv_heads
    q = (x @ W_q).reshape(B, L, num_query_heads, d).transpose(0, 2, 1, 3)
    K = (x @ W_k).reshape(B, L, num_kv_heads, d)
    V = (x @ W_v).reshape(B, L, num_kv_heads, d)
    allowed = None if mask is None else np.broadcast_to(np.asarray(mask) != 0, (B, num_query_heads, L, L))
    blocks = [_attend(q[:, j * g:(j + 1) * g], K[:, :, j], V[:, :, j],
                      None if allowed is None else allowed[:, j * g:(j + 1) * g]) for j in range(num_kv_heads)]
    y = np.concatenate(blocks, axis=1).transpose(0, 2, 1, 3).reshape(B, L, D)
    return (y @ W_o).astype(x.dtype)
