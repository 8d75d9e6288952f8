"""Bug (NumPy): builds the whole (L_q, L_k) score matrix, then walks it in blocks. Right values,
quadratic memory.

Must fail: memory_scaling
Mistake: full_score_matrix
"""

import math

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    L_q, L_k = q.shape[2], k.shape[2]
    S = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    if causal:
        S = np.where(np.tri(L_q, L_k, L_k - L_q, dtype=bool), S, -np.inf)
    m = np.full(q.shape[:-1] + (1,), -np.inf, dtype=q.dtype)
    l = np.zeros_like(m)
    acc = np.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for ks in range(0, L_k, block_size):
        s = S[..., ks:ks + block_size]
        m_new = np.maximum(m, s.max(-1, keepdims=True))
        safe = np.where(np.isinf(m_new), 0, m_new)
        p = np.exp(s - safe)
        a = np.exp(m - safe)
        l = a * l + p.sum(-1, keepdims=True)
        acc = a * acc + p @ v[..., ks:ks + block_size, :]
        m = m_new
    out = np.zeros_like(acc)
    np.divide(acc, l, out=out, where=l > 0)
    return out
