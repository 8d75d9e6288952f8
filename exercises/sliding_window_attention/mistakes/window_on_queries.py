"""the window was laid over the queries instead of the keys: each key's weights were normalised over the queries whose window holds it (a softmax down the band's query axis), so a query's weights over its own window do not sum to 1; softmax over the keys of each query's window.

Must fail: values, non_causal
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """The mutant: the band of the contract, normalised per key over the queries (dense, host only)."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q, k, v = query.to(work), key.to(work), value.to(work)
    p = (torch.arange(L_q) + (L_k - L_q)).view(L_q, 1)
    j = torch.arange(L_k).view(1, L_k)
    keep = ((j <= p) & (j > p - window)) if causal else ((p - j).abs() < window)   # (L_q, L_k)
    if mask is not None:
        keep = keep & (torch.broadcast_to(mask, (B, H, L_q, L_k)) != 0)
    s = (q @ k.transpose(-2, -1) / math.sqrt(d_k)).masked_fill(~keep, float("-inf"))  # (B, H, L_q, L_k)
    m = s.amax(dim=-2, keepdim=True)                                  # per key, over the queries
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    z = e.sum(dim=-2, keepdim=True)
    att = e / torch.where(z > 0, z, torch.ones_like(z))
    return (att @ v).to(query.dtype)
