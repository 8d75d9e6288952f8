"""Correct: FlashAttention-2 style without query tiling — all query rows at once, keys and values in
blocks, masked_fill(-inf) for the causal part, one division after the last block. The largest
temporary is (L_q, block_size): still linear in the length."""

import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size must be a positive integer")
    L_q, L_k = q.shape[-2], k.shape[-2]
    q = q / math.sqrt(q.shape[-1])
    row_max = torch.full(q.shape[:-1] + (1,), -math.inf, dtype=q.dtype)
    row_sum = torch.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    out = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    rows = torch.arange(L_q).unsqueeze(1)
    for start in range(0, L_k, block_size):
        kb, vb = k[..., start:start + block_size, :], v[..., start:start + block_size, :]
        s = torch.matmul(q, kb.transpose(-1, -2))
        if causal:
            cols = torch.arange(start, start + kb.shape[-2]).unsqueeze(0)
            s = s.masked_fill(cols > rows + (L_k - L_q), -math.inf)
        new_max = torch.maximum(row_max, s.max(dim=-1, keepdim=True).values)
        safe = torch.nan_to_num(new_max, neginf=0.0)
        p = torch.exp(s - safe)
        corr = torch.exp(row_max - safe)
        row_sum = row_sum * corr + p.sum(-1, keepdim=True)
        out = out * corr + p @ vb
        row_max = new_max
    return torch.where(row_sum > 0, out / row_sum.clamp_min(torch.finfo(row_sum.dtype).tiny), 0.0).to(q.dtype)
