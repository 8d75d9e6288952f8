"""Correct: the band as a strided view. Keys and values are padded at the front (window - 1 slots,
plus L_q - L_k more when there are more queries than keys) and, when not causal, at the back, then
`unfold` along the length gives every window of W keys as a view; query i takes the window starting
at padded slot i + max(L_k - L_q, 0). Slots that fall in the padding, and keys the mask hides, are
filled with -inf before the softmax.
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be an int >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    out_dtype = query.dtype
    if out_dtype in (torch.float16, torch.bfloat16):
        query, key, value = query.float(), key.float(), value.float()
    offset = L_k - L_q
    W = window if causal else 2 * window - 1
    front = window - 1 + max(-offset, 0)
    back = 0 if causal else window - 1
    start = max(offset, 0)
    kp = torch.nn.functional.pad(key, (0, 0, front, back))               # (B, H, front + L_k + back, d_k)
    vp = torch.nn.functional.pad(value, (0, 0, front, back))
    kw = kp.unfold(2, W, 1)[:, :, start:start + L_q]                     # (B, H, L_q, d_k, W) view
    vw = vp.unfold(2, W, 1)[:, :, start:start + L_q]                     # (B, H, L_q, d_v, W) view
    s = torch.einsum("bhqd,bhqdw->bhqw", query, kw) * (1.0 / math.sqrt(d_k))
    j = torch.arange(L_q).unsqueeze(1) + offset - window + 1 + torch.arange(W)  # (L_q, W) key index of each slot
    valid = (j >= 0) & (j < L_k)
    if mask is not None:
        jc = j.clamp(0, L_k - 1)
        valid = valid & (mask.expand(B, H, L_q, L_k)[:, :, torch.arange(L_q).unsqueeze(1), jc] != 0)
    s = s.masked_fill(~valid, float("-inf"))
    top = s.amax(-1, keepdim=True).detach()
    top = torch.nan_to_num(top, neginf=0.0)
    e = torch.exp(s - top)
    z = e.sum(-1, keepdim=True)
    att = e / z.clamp_min(torch.finfo(z.dtype).tiny)
    return torch.einsum("bhqw,bhqdw->bhqd", att, vw).to(out_dtype)
