"""Correct: FlashAttention-1 update (output kept normalised after every block), einsum over (b, h), masks by np.where."""
import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not (isinstance(block_size, (int, np.integer)) and block_size >= 1):
        raise ValueError(f"bad block_size {block_size}")
    q = np.asarray(q); k = np.asarray(k); v = np.asarray(v)
    wt = np.promote_types(q.dtype, np.float32)
    Lq, Lk, d = q.shape[2], k.shape[2], q.shape[3]
    qs = q.astype(wt) / np.sqrt(wt.type(d))
    m = np.full(q.shape[:3], -np.inf, dtype=wt)
    l = np.zeros(q.shape[:3], dtype=wt)
    o = np.zeros(q.shape[:3] + (v.shape[-1],), dtype=wt)
    row = np.arange(Lq)[:, None] + Lk - Lq
    for s0 in range(0, Lk, block_size):
        kb = k[:, :, s0:s0 + block_size].astype(wt)
        vb = v[:, :, s0:s0 + block_size].astype(wt)
        s = np.einsum("bhqd,bhkd->bhqk", qs, kb)
        if causal:
            s = np.where(np.arange(s0, s0 + kb.shape[2])[None, :] <= row, s, -np.inf)
        m_new = np.maximum(m, s.max(-1))
        shift = np.where(np.isneginf(m_new), 0.0, m_new)
        p = np.exp(s - shift[..., None])
        l_new = np.exp(m - shift) * l + p.sum(-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            o = np.where(l_new[..., None] > 0,
                         ((l * np.exp(m - shift))[..., None] * o + np.einsum("bhqk,bhkd->bhqd", p, vb))
                         / l_new[..., None], 0.0)
        m, l = m_new, l_new
    return o.astype(q.dtype)
