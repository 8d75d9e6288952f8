"""Bug: torch.softmax over the band filled with -inf: a row whose whole window is masked is a softmax
of all -inf, which is NaN, and the NaN reaches the output.

Must fail: fully_masked_rows
Mistake: nan_fully_masked
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
    keep = (j >= 0) & (j < L_k)
    j = j.clamp(0, L_k - 1)
    if mask is not None:
        keep = keep & (mask.expand(B, H, L_q, L_k)[:, :, torch.arange(L_q).unsqueeze(1), j] != 0)
    s = torch.einsum("bhqd,bhqwd->bhqw", q, k[:, :, j]) / math.sqrt(d_k)
    att = torch.softmax(s.masked_fill(~keep, float("-inf")), dim=-1)
    return torch.einsum("bhqw,bhqwd->bhqd", att, v[:, :, j]).to(query.dtype)
