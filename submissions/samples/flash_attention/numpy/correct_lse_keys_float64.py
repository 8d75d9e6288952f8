"""Correct (NumPy): key/value blocks only, the running state kept as a log-sum-exp per query row
and an already-normalised output (o <- o * exp(lse_old - lse_new) + exp(s - lse_new) @ v), float64
internals cast back to q's dtype, causal blocks past the last visible key skipped."""

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    B, H, Lq, d = q.shape
    Lk = k.shape[2]
    shift = Lk - Lq
    q64 = q.astype(np.float64) / np.sqrt(d)
    lse = np.full((B, H, Lq, 1), -np.inf)
    o = np.zeros((B, H, Lq, v.shape[-1]))
    qi = np.arange(Lq)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        for j0 in range(0, Lk, block_size):
            if causal and j0 > Lq - 1 + shift:
                break
            j1 = min(Lk, j0 + block_size)
            s = np.einsum("bhqd,bhkd->bhqk", q64, k[:, :, j0:j1].astype(np.float64))
            if causal:
                s = np.where(np.arange(j0, j1)[None, :] <= qi + shift, s, -np.inf)
            bm = s.max(axis=-1, keepdims=True)
            bm = np.where(np.isfinite(bm), bm, 0.0)
            block_lse = bm + np.log(np.exp(s - bm).sum(axis=-1, keepdims=True))
            new_lse = np.logaddexp(lse, block_lse)
            ref = np.where(np.isfinite(new_lse), new_lse, 0.0)
            o = o * np.exp(lse - ref) + np.exp(s - ref) @ v[:, :, j0:j1].astype(np.float64)
            lse = new_lse
    o = np.where(np.isfinite(lse), o, 0.0)
    return o.astype(q.dtype)
