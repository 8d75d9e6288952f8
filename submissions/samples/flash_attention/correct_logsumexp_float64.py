"""Correct: float64 internals, and a running log-sum-exp per row instead of a (max, sum) pair:
lse_new = logaddexp(lse, logsumexp(s)); out = out * exp(lse - lse_new) + exp(s - lse_new) @ v.
Query rows in tiles of block_size, key blocks skipped past the causal diagonal, einsum."""

import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size <= 0:
        raise ValueError("block_size must be >= 1")
    dtype = q.dtype
    q, k, v = q.double(), k.double(), v.double()
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    shift = L_k - L_q
    tiles = []
    for a in range(0, L_q, block_size):
        qt = q[:, :, a:a + block_size]
        n = qt.shape[2]
        lse = torch.full((B, H, n, 1), -math.inf, dtype=torch.float64)
        acc = torch.zeros((B, H, n, v.shape[-1]), dtype=torch.float64)
        stop = min(L_k, a + n + shift) if causal else L_k
        for c in range(0, max(stop, 0), block_size):
            s = torch.einsum("bhid,bhjd->bhij", qt, k[:, :, c:c + block_size]) / math.sqrt(d)
            if causal:
                ii = torch.arange(a, a + n)[:, None]
                jj = torch.arange(c, c + s.shape[-1])[None, :]
                s = s.masked_fill(jj > ii + shift, -math.inf)
            blk = torch.logsumexp(s, dim=-1, keepdim=True)
            new = torch.logaddexp(lse, blk)
            fin = torch.isfinite(new)
            base = torch.where(fin, new, torch.zeros_like(new))
            acc = acc * torch.where(fin, torch.exp(lse - base), torch.zeros_like(lse)) \
                + torch.einsum("bhij,bhjd->bhid", torch.exp(s - base), v[:, :, c:c + block_size])
            lse = new
        tiles.append(acc)
    out = torch.cat(tiles, dim=2) if tiles else torch.zeros(B, H, 0, v.shape[-1], dtype=torch.float64)
    return out.to(dtype)
