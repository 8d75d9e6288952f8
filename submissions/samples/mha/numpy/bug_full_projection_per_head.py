"""Wrong (NumPy track): projects the full width once per head and keeps only that head's columns,
num_heads times the projection work (right numbers).

Must fail: flops_scaling
Mistake: full_projection_per_head
"""

import math

import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    d_k = D // num_heads
    keep = None if mask is None else np.broadcast_to(np.asarray(mask) != 0, (B, num_heads, L_q, key.shape[1]))
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        q = (query @ W_q)[..., cols]
        k = (key @ W_k)[..., cols]
        v = (value @ W_v)[..., cols]
        s = q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k)
        if keep is not None:
            s = np.where(keep[:, h], s, -np.inf)
        m = np.max(s, -1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        e = np.exp(s - m)
        t = e.sum(-1, keepdims=True)
        heads.append(np.divide(e, t, out=np.zeros_like(e), where=t > 0) @ v)
    return (np.concatenate(heads, axis=-1) @ W_o).astype(query.dtype)
