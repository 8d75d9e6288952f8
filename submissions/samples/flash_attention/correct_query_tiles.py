"""Correct: FlashAttention-1 style with query tiles: each tile of block_size queries loops over the
key blocks it needs (causal: up to the block holding its last visible key, bottom-right aligned),
keeping a running max, sum and output rescaled by exp(m_old - m_new). The bank's one-line mistakes
are written into this style by tests/test_flash_attention.py to prove replay names them here too.
"""

import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size must be an integer >= 1")
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    outs = []
    for qs in range(0, L_q, block_size):
        qb = q[:, :, qs:qs + block_size] / math.sqrt(d)
        n = qb.shape[2]
        m = torch.full((B, H, n, 1), -math.inf, dtype=q.dtype)
        l = torch.zeros((B, H, n, 1), dtype=q.dtype)
        acc = torch.zeros((B, H, n, d), dtype=q.dtype)
        last = qs + n - 1 + L_k - L_q  # last key the last row of this tile may see
        n_blocks = (min(last + 1, L_k) + block_size - 1) // block_size if causal else -(-L_k // block_size)
        for kb in range(max(n_blocks, 0)):
            ks = kb * block_size
            s = qb @ k[:, :, ks:ks + block_size].transpose(-2, -1)
            if causal:
                future = torch.arange(ks, ks + s.shape[-1])[None, :] > torch.arange(qs, qs + n)[:, None] + (L_k - L_q)
                s = s.masked_fill(future, -math.inf)
            m_new = torch.maximum(m, s.amax(-1, keepdim=True))
            m_safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
            p = torch.exp(s - m_safe)
            alpha = torch.exp(m - m_safe)
            l = alpha * l + p.sum(-1, keepdim=True)
            acc = alpha * acc + p @ v[:, :, ks:ks + block_size]
            m = m_new
        outs.append(torch.where(l > 0, acc / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(acc)))
    return torch.cat(outs, dim=2)
