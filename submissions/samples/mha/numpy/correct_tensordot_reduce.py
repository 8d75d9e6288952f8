"""Correct (NumPy track): per-head weights as (D, H, d_k) views contracted with tensordot, W_o applied per head and summed with functools.reduce."""
import numpy as np
from functools import reduce
def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    D = W_q.shape[0]
    if D % num_heads:
        raise ValueError("num_heads must divide D")
    H = num_heads; dk = D // H
    proj = lambda x, W: np.tensordot(x, W.reshape(D, H, dk), axes=([2], [0])).transpose(0, 2, 1, 3)
    q, k, v = proj(query, W_q), proj(key, W_k), proj(value, W_v)
    s = np.matmul(q, k.transpose(0, 1, 3, 2)) / np.sqrt(dk)
    keep = np.ones_like(s, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask).astype(bool), s.shape)
    s = np.where(keep, s, np.finfo(s.dtype).min)
    e = np.exp(s - s.max(-1, keepdims=True)) * keep
    z = e.sum(-1, keepdims=True)
    p = e / np.where(z == 0, 1, z)
    y = np.matmul(p, v)
    Wo = W_o.reshape(H, dk, D)
    return reduce(np.add, [y[:, h] @ Wo[h] for h in range(H)]).astype(query.dtype)
