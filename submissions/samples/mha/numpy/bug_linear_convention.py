"""Wrong (NumPy track): projections in nn.Linear's convention (x @ W.T) although the contract
multiplies on the right (x @ W).

Must fail: self_attention, cross_attention
Mistake: weights_transposed
"""
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError("bad num_heads")
    d_k = D // num_heads
    sp = lambda x: x.reshape(B, -1, num_heads, d_k).transpose(0, 2, 1, 3)
    q, k, v = sp(query @ W_q.T), sp(key @ W_k.T), sp(value @ W_v.T)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k).astype(query.dtype)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    z = e.sum(-1, keepdims=True)
    w = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    return (w @ v).transpose(0, 2, 1, 3).reshape(B, L_q, D) @ W_o.T
