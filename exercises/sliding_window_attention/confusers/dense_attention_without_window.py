"""Confuser: plain softmax attention over every key with the causal limit and the padding mask, the
window never applied: the L_q x L_k cost of dense attention (q @ k^T, the softmax and the weights @ V
over every key), and wrong values wherever a query sees more than `window` keys. The bank's
dense_band_attention costs the same but has the right values, so its cost replay must not name it.

Must not name: dense_band_attention, full_scores
"""
import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    L_q, L_k = query.shape[2], key.shape[2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q, k, v = query.to(work), key.to(work), value.to(work)
    keep = torch.ones(L_q, L_k, dtype=torch.bool)
    if causal:
        keep = keep.tril(L_k - L_q)
    if mask is not None:
        keep = keep & (mask != 0)
    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~keep, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)
    p = torch.exp(s - torch.where(torch.isfinite(m), m, torch.zeros_like(m)))
    l = p.sum(dim=-1, keepdim=True)
    return ((p / torch.where(l > 0, l, torch.ones_like(l))) @ v).to(query.dtype)
