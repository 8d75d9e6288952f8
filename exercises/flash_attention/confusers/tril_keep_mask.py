"""Confuser: with causal=True, a 0/1 keep-mask of shape (L_q, L_k) (1.0 where query i may see key j) is
built once, and each block's scores are masked_fill'ed with -inf where its slice is 0: the causal path holds an
L_q x L_k mask (memory grows like seq_len^2). There is no additive bias (no 0/-inf matrix is added
to the scores); the values are right.

The cost replay may name causal_bias_materialised: its sentence now leads with what the replay proves ("your measured cost equals, at the larger sizes, that of this mistake (a different structure of the same size costs the same)"), which is true of this file; a hand-written hint stating the mechanism as fact is not.

Must not name: "additive (L_q, L_k) bias", full_score_matrix, cross_lengths_plain_attention
May name: causal_bias_materialised
"""
import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    """Exact softmax attention computed key block by key block.

    Args:
        q: (B, H, L_q, d) tensor. k, v: (B, H, L_k, d) tensors.
        block_size: rows of keys/values per block, an int >= 1.
        causal: mask key ``j`` for query ``i`` when ``j > i + L_k - L_q`` (bottom-right aligned).

    Returns:
        (B, H, L_q, d) tensor in ``q``'s dtype, ``softmax(q k^T / sqrt(d)) v`` with masked keys
        excluded and rows that see no key equal to 0; differentiable in q, k and v.

    Raises:
        ValueError: ``block_size`` is not an integer >= 1.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    offset = L_k - L_q                                          # bottom-right alignment
    qs = q * (1.0 / math.sqrt(d))                               # (B, H, L_q, d)
    m = torch.full((B, H, L_q, 1), float("-inf"), dtype=q.dtype)  # running max
    l = torch.zeros((B, H, L_q, 1), dtype=q.dtype)              # running sum of exp(s - m)
    acc = torch.zeros((B, H, L_q, v.shape[-1]), dtype=q.dtype)  # running sum of exp(s - m) v
    k_end = min(L_k, L_q + offset) if causal else L_k           # keys past this are masked for every row
    if causal:                                                  # 1 where query i may see key j
        allowed = torch.zeros((L_q, L_k), dtype=q.dtype).masked_fill(
            torch.arange(L_k).view(1, L_k) <= torch.arange(L_q).view(L_q, 1) + offset, 1.0)
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ k[:, :, ks:ks + block_size].transpose(-2, -1)  # (B, H, L_q, b)
        if causal:
            s = s.masked_fill(allowed[:, ks:ks + s.shape[-1]] == 0, float("-inf"))  # (B, H, L_q, b)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (B, H, L_q, 1)
        m_safe = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))
        p = torch.exp(s - m_safe)                               # (B, H, L_q, b); masked -> 0
        alpha = torch.exp(m - m_safe)                           # (B, H, L_q, 1) rescales the past
        l = alpha * l + p.sum(dim=-1, keepdim=True)
        acc = alpha * acc + p @ v[:, :, ks:ks + block_size]     # (B, H, L_q, d)
        m = m_new
    seen = l > 0
    return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc))
