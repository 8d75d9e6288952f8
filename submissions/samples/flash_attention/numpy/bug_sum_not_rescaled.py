"""Bug (NumPy): the running max is not used to rescale the running sum (l += rowsum(p)).

Must fail: values
Mistake: sum_not_rescaled
"""

import math

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size must be >= 1")
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    qs = q / math.sqrt(d)
    m = np.full((B, H, L_q, 1), -np.inf, dtype=q.dtype)
    l = np.zeros((B, H, L_q, 1), dtype=q.dtype)
    acc = np.zeros((B, H, L_q, d), dtype=q.dtype)
    for ks in range(0, L_k, block_size):
        s = qs @ np.swapaxes(k[:, :, ks:ks + block_size], -1, -2)
        if causal:
            s = np.where(np.arange(ks, ks + s.shape[-1])[None] > np.arange(L_q)[:, None] + L_k - L_q, -np.inf, s)
        m_new = np.maximum(m, s.max(-1, keepdims=True))
        safe = np.where(np.isinf(m_new), 0, m_new)
        p = np.exp(s - safe)
        l = l + p.sum(-1, keepdims=True)
        acc = np.exp(m - safe) * acc + p @ v[:, :, ks:ks + block_size]
        m = m_new
    out = np.zeros_like(acc)
    np.divide(acc, l, out=out, where=l > 0)
    return out
