"""Bug: the textbook detour. The whole (L_q, L_k) score matrix q @ k^T is computed, a dense band
mask built with tril/triu and combined with the mask, then softmax over all L_k keys: the values are
right, but work and memory grow like L^2 on every path instead of L * window.

Must fail: memory_scaling, flops_scaling
Mistake: dense_band_attention
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be >= 1")
    L_q, L_k = query.shape[2], key.shape[2]
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = query.to(work), key.to(work), value.to(work)
    off = L_k - L_q
    ones = torch.ones(L_q, L_k, dtype=torch.bool)
    band = ones.tril(off) & ones.triu(off - window + 1) if causal else ones.tril(off + window - 1) & ones.triu(off - window + 1)
    keep = band if mask is None else band & (mask != 0)
    s = (q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])).masked_fill(~keep, float("-inf"))
    mx = s.amax(-1, keepdim=True)
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    e = torch.exp(s - mx)
    z = e.sum(-1, keepdim=True)
    return ((e / torch.where(z > 0, z, torch.ones_like(z))) @ v).to(dtype)
