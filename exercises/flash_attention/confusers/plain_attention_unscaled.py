"""Confuser: plain softmax attention over the whole (L_q, L_k) score matrix, and the scores never
divided by sqrt(d): the L_q x L_k memory of plain attention and wrong values on every case. The bank's
plain_attention costs the same but has the right values, so its cost replay must not name it.

Must not name: plain_attention, full_score_matrix, causal_bias_materialised, cross_lengths_plain_attention
"""
import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    L_q, L_k = q.shape[2], k.shape[2]
    s = q @ k.transpose(-2, -1)                                  # (B, H, L_q, L_k), no 1/sqrt(d)
    if causal:
        hidden = torch.arange(L_k).view(1, L_k) > torch.arange(L_q).view(L_q, 1) + (L_k - L_q)
        s = s.masked_fill(hidden, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    e = torch.exp(s - torch.where(torch.isfinite(m), m, torch.zeros_like(m)))
    total = e.sum(dim=-1, keepdim=True)
    return torch.where(total > 0, (e @ v) / torch.where(total > 0, total, torch.ones_like(total)),
                       torch.zeros_like(q)).to(q.dtype)
