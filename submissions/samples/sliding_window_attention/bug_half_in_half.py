"""Bug: half-precision inputs computed in half precision throughout (no upcast): the scores, the
softmax and the weighted sum are rounded to float16/bfloat16 at every step, where the contract
accumulates in float32.

Must fail: half_precision
Mistake: float16_accumulation
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    W = window if causal else 2 * window - 1
    j = (torch.arange(L_q) + L_k - L_q - window + 1).unsqueeze(1) + torch.arange(W)
    keep = (j >= 0) & (j < L_k)
    j = j.clamp(0, L_k - 1)
    if mask is not None:
        keep = keep & (mask.expand(B, H, L_q, L_k)[:, :, torch.arange(L_q).unsqueeze(1), j] != 0)
    s = torch.einsum("bhqd,bhqwd->bhqw", query, key[:, :, j]) / math.sqrt(d_k)
    s = s.masked_fill(~keep, float("-inf"))
    mx = s.amax(-1, keepdim=True)
    e = torch.exp(s - torch.where(mx.isinf(), torch.zeros_like(mx), mx))
    z = e.sum(-1, keepdim=True)
    return torch.einsum("bhqw,bhqwd->bhqd", e / torch.where(z > 0, z, torch.ones_like(z)), value[:, :, j])
