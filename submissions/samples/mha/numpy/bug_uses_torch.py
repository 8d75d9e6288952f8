"""Wrong (NumPy track): uses torch, which the NumPy track forbids.

Must fail: self_attention
Mistake: forbidden_api
"""

import math

import numpy as np
import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError("bad heads")
    d_k = D // num_heads
    q = (query @ W_q).reshape(B, L_q, num_heads, d_k).transpose(0, 2, 1, 3)
    k = (key @ W_k).reshape(B, L_k, num_heads, d_k).transpose(0, 2, 1, 3)
    v = (value @ W_v).reshape(B, L_k, num_heads, d_k).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d_k)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    m = np.max(s, -1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = torch.exp(torch.from_numpy(s - m)).numpy()
    t = e.sum(-1, keepdims=True)
    w = np.divide(e, t, out=np.zeros_like(e), where=t > 0)
    return ((w @ v).transpose(0, 2, 1, 3).reshape(B, L_q, D) @ W_o).astype(query.dtype)
