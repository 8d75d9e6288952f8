"""Correct: FlashAttention-1's Algorithm 1 literally — query and key tiles, the output kept
normalised at every step and rescaled by (l_old * exp(m_old - m_new)) / l_new, written into a
preallocated output with index_copy (differentiable)."""

import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if isinstance(block_size, bool) or int(block_size) != block_size or block_size < 1:
        raise ValueError(f"bad block_size {block_size}")
    B, H, Lq, d = q.shape
    Lk = k.shape[2]
    out = torch.zeros(B, H, Lq, v.shape[-1], dtype=q.dtype)
    for i0 in range(0, Lq, block_size):
        i1 = min(i0 + block_size, Lq)
        Qi = q[:, :, i0:i1]
        m = torch.full((B, H, i1 - i0, 1), float("-inf"), dtype=q.dtype)
        l = torch.zeros((B, H, i1 - i0, 1), dtype=q.dtype)
        O = torch.zeros((B, H, i1 - i0, v.shape[-1]), dtype=q.dtype)
        for j0 in range(0, Lk, block_size):
            j1 = min(j0 + block_size, Lk)
            if causal and j0 > (i1 - 1) + (Lk - Lq):
                break  # every later key is in the future of every row of this tile
            S = Qi @ k[:, :, j0:j1].transpose(2, 3) / math.sqrt(d)
            if causal:
                allowed = torch.arange(j0, j1)[None, :] <= torch.arange(i0, i1)[:, None] + (Lk - Lq)
                S = torch.where(allowed, S, torch.tensor(float("-inf"), dtype=S.dtype))
            m_blk = S.max(dim=-1, keepdim=True).values
            m_new = torch.maximum(m, m_blk)
            ok = torch.isfinite(m_new)
            m_use = torch.where(ok, m_new, torch.zeros_like(m_new))
            P = torch.exp(S - m_use)
            l_new = torch.exp(m - m_use) * l + P.sum(-1, keepdim=True)
            denom = torch.where(l_new > 0, l_new, torch.ones_like(l_new))
            O = torch.where(l_new > 0, (l * torch.exp(m - m_use) * O + P @ v[:, :, j0:j1]) / denom, O)
            m, l = m_new, l_new
        out = out.index_copy(2, torch.arange(i0, i1), O)
    return out
