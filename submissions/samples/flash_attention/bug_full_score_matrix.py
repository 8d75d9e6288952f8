"""Bug: builds the whole (L_q, L_k) score matrix q @ k^T first, then walks it in blocks with a
running max and sum. The values are right; the memory is quadratic.

Must fail: memory_scaling
Mistake: full_score_matrix
"""

import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size must be >= 1")
    L_q, L_k = q.shape[2], k.shape[2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, H, L_q, L_k): the whole matrix
    if causal:
        keep = torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)
        scores = scores.masked_fill(~keep, -math.inf)
    m = torch.full(q.shape[:-1] + (1,), -math.inf, dtype=q.dtype)
    l = torch.zeros(q.shape[:-1] + (1,), dtype=q.dtype)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype)
    for ks in range(0, L_k, block_size):
        s = scores[..., ks:ks + block_size]
        m_new = torch.maximum(m, s.amax(-1, keepdim=True))
        safe = torch.where(torch.isinf(m_new), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - safe)
        alpha = torch.exp(m - safe)
        l = alpha * l + p.sum(-1, keepdim=True)
        acc = alpha * acc + p @ v[..., ks:ks + block_size, :]
        m = m_new
    return torch.where(l > 0, acc / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(acc))
