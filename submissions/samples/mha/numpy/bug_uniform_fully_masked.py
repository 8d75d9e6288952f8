"""Wrong (NumPy track): masked scores set to -1e9 (the annotated-transformer idiom) with nothing
else: a fully masked query row gets uniform weights (the mean of the values), not 0.

Must fail: fully_masked_rows
Mistake: finite_mask_fill
"""
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError("bad num_heads")
    d_k = D // num_heads
    sp = lambda x: x.reshape(B, -1, num_heads, d_k).transpose(0, 2, 1, 3)
    q, k, v = sp(query @ W_q), sp(key @ W_k), sp(value @ W_v)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d_k).astype(query.dtype)
    if mask is not None:
        s = np.where(np.asarray(mask) == 0, -1e9, s).astype(query.dtype)
    e = np.exp(s - s.max(-1, keepdims=True))
    w = e / e.sum(-1, keepdims=True)
    return (w @ v).transpose(0, 2, 1, 3).reshape(B, L_q, D) @ W_o
