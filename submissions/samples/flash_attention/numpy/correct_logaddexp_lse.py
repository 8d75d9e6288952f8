"""Correct: running log-sum-exp instead of (max, sum): lse = logaddexp(lse, block_lse), output reweighted by exp(lse_old - lse_new)."""
import math
import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    if int(block_size) != block_size or block_size <= 0:
        raise ValueError("block_size")
    B, H, Lq, d = q.shape
    Lk = k.shape[-2]
    f = np.float64 if q.dtype == np.float64 else np.float32
    lse = np.full((B, H, Lq, 1), -np.inf, f)
    o = np.zeros((B, H, Lq, v.shape[-1]), f)
    qi = np.arange(Lq).reshape(-1, 1)
    for start in range(0, Lk, block_size):
        stop = min(start + block_size, Lk)
        s = np.matmul(q.astype(f), k[:, :, start:stop].astype(f).transpose(0, 1, 3, 2)) / f(math.sqrt(d))
        if causal:
            s[..., np.arange(start, stop)[None, :] > qi + (Lk - Lq)] = -np.inf
        bmax = s.max(-1, keepdims=True)
        bsafe = np.where(np.isfinite(bmax), bmax, 0)
        blse = np.log(np.exp(s - bsafe).sum(-1, keepdims=True)) + bsafe   # -inf where all masked
        new = np.logaddexp(lse, blse)
        nsafe = np.where(np.isfinite(new), new, 0)
        o = o * np.exp(lse - nsafe) + np.exp(s - nsafe) @ v[:, :, start:stop].astype(f)
        lse = new
    return o.astype(q.dtype)
