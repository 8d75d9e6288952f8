"""Bug: the mask read as "True = masked out" (the convention of nn.MultiheadAttention's
key_padding_mask): the keys the mask allows are hidden and the padded ones attended.

Must fail: masks
Mistake: mask_polarity_inverted
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q, k, v = query.to(work), key.to(work), value.to(work)
    W = window if causal else 2 * window - 1
    j = (torch.arange(L_q) + L_k - L_q - window + 1).unsqueeze(1) + torch.arange(W)
    hide = (j < 0) | (j >= L_k)
    j = j.clamp(0, L_k - 1)
    if mask is not None:
        hide = hide | mask.expand(B, H, L_q, L_k)[:, :, torch.arange(L_q).unsqueeze(1), j].bool()
    s = torch.einsum("bhqd,bhqwd->bhqw", q, k[:, :, j]) / math.sqrt(d_k)
    s = s.masked_fill(hide, -math.inf)
    mx = s.amax(-1, keepdim=True)
    e = torch.exp(s - torch.where(mx.isinf(), torch.zeros_like(mx), mx))
    z = e.sum(-1, keepdim=True)
    return torch.einsum("bhqw,bhqwd->bhqd", e / torch.where(z > 0, z, torch.ones_like(z)), v[:, :, j]).to(query.dtype)
