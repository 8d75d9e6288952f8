"""Confuser: plain softmax attention over the whole (L_q, L_k) score matrix, and the scores never
divided by sqrt(d): the L_q x L_k memory of plain attention and wrong values on every case. The bank's
plain_attention costs the same but has the right values, so its cost replay must not name it.

Must not name: plain_attention, full_score_matrix, causal_bias_materialised, cross_lengths_plain_attention
"""
import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    L_q, L_k = q.shape[2], k.shape[2]
    s = q @ np.swapaxes(k, -1, -2)                               # (B, H, L_q, L_k), no 1/sqrt(d)
    if causal:
        s = np.where(np.arange(L_k)[None, :] > np.arange(L_q)[:, None] + (L_k - L_q), -np.inf, s)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    total = e.sum(axis=-1, keepdims=True)
    out = np.zeros(q.shape[:3] + (v.shape[-1],), dtype=q.dtype)
    np.divide(e @ v, total, out=out, where=total > 0)
    return out.astype(q.dtype)
