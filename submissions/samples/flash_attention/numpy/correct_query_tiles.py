"""Correct (NumPy): query and key tiles (FlashAttention-1 layout), max-subtracted exp, causal key
blocks past the diagonal skipped, output written tile by tile into a preallocated array."""

import math

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size must be >= 1")
    B, H, Lq, d = q.shape
    Lk = k.shape[2]
    out = np.zeros((B, H, Lq, v.shape[-1]), dtype=q.dtype)
    for i0 in range(0, Lq, block_size):
        i1 = min(Lq, i0 + block_size)
        Qi = q[:, :, i0:i1] / math.sqrt(d)
        m = np.full((B, H, i1 - i0, 1), -np.inf)
        l = np.zeros((B, H, i1 - i0, 1))
        O = np.zeros((B, H, i1 - i0, v.shape[-1]))
        for j0 in range(0, Lk, block_size):
            if causal and j0 > i1 - 1 + Lk - Lq:
                break
            j1 = min(Lk, j0 + block_size)
            S = Qi @ k[:, :, j0:j1].swapaxes(-1, -2)
            if causal:
                S = np.where(np.arange(j0, j1)[None] <= np.arange(i0, i1)[:, None] + Lk - Lq, S, -np.inf)
            m_new = np.maximum(m, S.max(-1, keepdims=True))
            safe = np.where(np.isneginf(m_new), 0.0, m_new)
            P = np.exp(S - safe)
            c = np.exp(m - safe)
            l = c * l + P.sum(-1, keepdims=True)
            O = c * O + P @ v[:, :, j0:j1]
            m = m_new
        with np.errstate(invalid="ignore", divide="ignore"):
            out[:, :, i0:i1] = np.where(l > 0, O / l, 0.0)
    return out
