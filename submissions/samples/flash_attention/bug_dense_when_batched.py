"""Wrong: tiled for one sequence, but a batch goes through plain attention ("batches are short"): the
whole (L_q, L_k) score matrix per batch element, the contract's L_q x L_k matrix on the batched path
only. A probe of one sequence gave full marks; the batch-of-two path sees it (issue 24, item 4).

Must fail: memory_scaling
Mistake: plain_attention
"""
import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    """Exact attention: tiled when B == 1, plain softmax attention for a batch."""
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    if q.shape[0] == 1:
        return _tiled(q, k, v, block_size, causal)
    L_q, L_k = q.shape[2], k.shape[2]
    s = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])      # (B, H, L_q, L_k)
    if causal:
        keep = torch.ones(L_q, L_k, dtype=torch.bool).tril(L_k - L_q)
        s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    p = torch.exp(s - m)
    l = p.sum(dim=-1, keepdim=True)
    return ((p / torch.where(l > 0, l, torch.ones_like(l))) @ v).to(q.dtype)


def _tiled(q, k, v, block_size=64, causal=False):
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
    rows = torch.arange(L_q).view(L_q, 1)
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ k[:, :, ks:ks + block_size].transpose(-2, -1)  # (B, H, L_q, b)
        if causal:
            cols = torch.arange(ks, ks + s.shape[-1]).view(1, -1)
            s = s.masked_fill(cols > rows + offset, float("-inf"))  # (B, H, L_q, b)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (B, H, L_q, 1)
        m_safe = torch.where(torch.isfinite(m_new), m_new, torch.zeros_like(m_new))
        p = torch.exp(s - m_safe)                               # (B, H, L_q, b); masked -> 0
        alpha = torch.exp(m - m_safe)                           # (B, H, L_q, 1) rescales the past
        l = alpha * l + p.sum(dim=-1, keepdim=True)
        acc = alpha * acc + p @ v[:, :, ks:ks + block_size]     # (B, H, L_q, d)
        m = m_new
    seen = l > 0
    return torch.where(seen, acc / torch.where(seen, l, torch.ones_like(l)), torch.zeros_like(acc))
