"""Bug: the unfold band without the cache offset. Keys are padded at the front and unfolded, and
query i takes window i: right when L_q = L_k, but with a cache (L_q < L_k) the queries are the last
L_q positions and must take windows i + L_k - L_q (bottom-right).

Must fail: cache_alignment
Mistake: top_left
"""

import math

import torch
import torch.nn.functional as F


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be an int >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    out_dtype = query.dtype
    if out_dtype in (torch.float16, torch.bfloat16):
        query, key, value = query.float(), key.float(), value.float()
    W = window if causal else 2 * window - 1
    back = 0 if causal else window - 1
    kp = F.pad(key, (0, 0, window - 1, back + max(L_q - L_k, 0)))
    vp = F.pad(value, (0, 0, window - 1, back + max(L_q - L_k, 0)))
    kw = kp.unfold(2, W, 1)[:, :, :L_q]
    vw = vp.unfold(2, W, 1)[:, :, :L_q]
    s = torch.einsum("bhqd,bhqdw->bhqw", query, kw) / math.sqrt(d_k)
    j = torch.arange(L_q).unsqueeze(1) - window + 1 + torch.arange(W)
    valid = (j >= 0) & (j < L_k)
    if mask is not None:
        valid = valid & (mask.expand(B, H, L_q, L_k)[:, :, torch.arange(L_q).unsqueeze(1), j.clamp(0, L_k - 1)] != 0)
    s = s.masked_fill(~valid, float("-inf"))
    top = torch.nan_to_num(s.amax(-1, keepdim=True).detach(), neginf=0.0)
    e = torch.exp(s - top)
    att = e / e.sum(-1, keepdim=True).clamp_min(1e-30)
    return torch.einsum("bhqw,bhqdw->bhqd", att, vw).to(out_dtype)
