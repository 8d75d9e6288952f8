"""Correct: the padded band gathered with one index, masked with the dtype's smallest finite value
instead of -inf and normalised with torch.softmax; rows that see no key (a uniform softmax over
filled slots) are then set to 0 by a keep-any factor, so neither values nor gradients are NaN.
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be a positive int")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = torch.promote_types(query.dtype, torch.float32)
    q, k, v = query.to(work), key.to(work), value.to(work)
    W = window if causal else 2 * window - 1
    first = torch.arange(L_q) + (L_k - L_q) - (window - 1)               # first key of each window
    j = first[:, None] + torch.arange(W)[None, :]                        # (L_q, W)
    inside = (j >= 0) & (j < L_k)
    jj = torch.where(inside, j, torch.zeros_like(j))
    kb = k[:, :, jj]                                                     # (B, H, L_q, W, d_k)
    vb = v[:, :, jj]                                                     # (B, H, L_q, W, d_v)
    allowed = inside.expand(B, H, L_q, W)
    if mask is not None:
        mb = torch.broadcast_to(mask, (B, H, L_q, L_k))
        allowed = allowed & mb.gather(3, jj.expand(B, H, L_q, W)).ne(0)
    s = (kb @ q.unsqueeze(-1)).squeeze(-1) / math.sqrt(d_k)              # (B, H, L_q, W)
    s = s.masked_fill(~allowed, torch.finfo(work).min)
    att = torch.softmax(s, dim=-1) * allowed
    att = att * allowed.any(-1, keepdim=True)
    return (att.unsqueeze(-2) @ vb).squeeze(-2).to(query.dtype)
