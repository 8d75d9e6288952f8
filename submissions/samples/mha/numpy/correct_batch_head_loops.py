"""Correct (NumPy track): a double Python loop over batch and heads with 2-D np.dot on column
slices, a masked row softmax by hand (np.where with -inf, rows with no key left at zero)."""
import math

import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    d_k = D // num_heads
    Q, K, V = np.dot(query, W_q), np.dot(key, W_k), np.dot(value, W_v)
    allowed = np.ones((B, num_heads, L_q, L_k), bool) if mask is None else \
        np.broadcast_to(np.asarray(mask) != 0, (B, num_heads, L_q, L_k))
    ctx = np.zeros((B, L_q, D), dtype=query.dtype)
    for b in range(B):
        for h in range(num_heads):
            cols = slice(h * d_k, (h + 1) * d_k)
            s = np.dot(Q[b, :, cols], K[b, :, cols].T) / math.sqrt(d_k)
            s = np.where(allowed[b, h], s, -np.inf)
            for i in range(L_q):
                if not allowed[b, h, i].any():
                    continue
                e = np.exp(s[i] - s[i].max())
                ctx[b, i, cols] = np.dot(e / e.sum(), V[b, :, cols])
    return np.dot(ctx, W_o).astype(query.dtype)
