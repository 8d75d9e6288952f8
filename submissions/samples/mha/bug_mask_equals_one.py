"""Bug: only mask entries equal to 1 may attend (`mask == 1`), where the contract says nonzero / True
may attend; a 0/1 mask hides it, a mask of 0 / 3 does not.

Mistake: mask_equals_one
Must fail: numeric_mask
"""

import math, torch
def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, Lq, D = query.shape
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    H = num_heads; dk = D // H
    q = (query @ W_q).view(B, Lq, H, dk).permute(0, 2, 1, 3)
    k = (key @ W_k).view(B, -1, H, dk).permute(0, 2, 1, 3)
    v = (value @ W_v).view(B, -1, H, dk).permute(0, 2, 1, 3)
    s = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(dk))
    if mask is not None:
        allow = torch.as_tensor(mask, device=s.device) == 1
        s = s + torch.zeros_like(s).masked_fill(~allow, torch.finfo(s.dtype).min)
        w = torch.softmax(s, dim=-1) * allow.to(s.dtype)
    else:
        w = torch.softmax(s, dim=-1)
    return (w @ v).permute(0, 2, 1, 3).reshape(B, Lq, D) @ W_o
