"""Correct: explicit loops over batch and heads, FlashAttention-2 (unnormalised accumulator, divide at end), float32 work for half."""
import math
import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be positive")
    B, H, Lq, d = q.shape
    Lk = k.shape[2]
    wt = np.float64 if q.dtype == np.float64 else np.float32
    out = np.zeros(q.shape[:3] + (v.shape[-1],), dtype=q.dtype)
    scale = 1.0 / math.sqrt(d)
    for b in range(B):
        for h in range(H):
            Q = q[b, h].astype(wt) * wt(scale)
            m = np.full(Lq, -np.inf, dtype=wt)
            l = np.zeros(Lq, dtype=wt)
            acc = np.zeros((Lq, v.shape[-1]), dtype=wt)
            for j in range(0, Lk, block_size):
                K = k[b, h, j:j + block_size].astype(wt)
                V = v[b, h, j:j + block_size].astype(wt)
                S = np.dot(Q, K.T)
                if causal:
                    qi = np.arange(Lq)[:, None] + (Lk - Lq)
                    kj = np.arange(j, j + K.shape[0])[None, :]
                    S[kj > qi] = -np.inf
                bm = S.max(axis=1)
                m_new = np.maximum(m, bm)
                ok = np.isfinite(m_new)
                base = np.where(ok, m_new, 0.0)
                P = np.exp(S - base[:, None])
                corr = np.exp(m - base)
                l = l * corr + P.sum(axis=1)
                acc = acc * corr[:, None] + P @ V
                m = m_new
            res = np.zeros_like(acc)
            nz = l > 0
            res[nz] = acc[nz] / l[nz, None]
            out[b, h] = res
    return out
