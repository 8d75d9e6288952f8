"""Correct: K/V projected at num_kv_heads, then shared across each group with `expand` (a view,
no copy) and a reshape to num_query_heads heads; boolean mask through masked_fill with the dtype's
lowest value, fully masked rows zeroed afterwards; float32 compute for half inputs."""

import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    H, G = num_query_heads, num_kv_heads
    if D % H or H % G:
        raise ValueError("D must divide by num_query_heads and num_query_heads by num_kv_heads")
    d_k, group = D // H, H // G
    dtype = x.dtype
    work = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    x, W_q, W_k, W_v, W_o = (t.to(work) for t in (x, W_q, W_k, W_v, W_o))
    q = (x @ W_q).view(B, L, H, d_k).transpose(1, 2)                       # (B, H, L, d_k)
    k = (x @ W_k).view(B, L, G, d_k).transpose(1, 2)                       # (B, G, L, d_k)
    v = (x @ W_v).view(B, L, G, d_k).transpose(1, 2)
    k = k[:, :, None].expand(B, G, group, L, d_k).reshape(B, H, L, d_k)    # head h -> KV head h // group
    v = v[:, :, None].expand(B, G, group, L, d_k).reshape(B, H, L, d_k)
    s = q @ k.transpose(-2, -1) * (1.0 / math.sqrt(d_k))                   # (B, H, L, L)
    if mask is not None:
        keep = (mask != 0).expand_as(s) if (mask != 0).dim() == 4 else torch.broadcast_to(mask != 0, s.shape)
        s = s.masked_fill(~keep, torch.finfo(s.dtype).min)
        p = torch.softmax(s, dim=-1) * keep.any(dim=-1, keepdim=True)
    else:
        p = torch.softmax(s, dim=-1)
    y = (p @ v).transpose(1, 2).reshape(B, L, D) @ W_o                    # (B, L, D)
    return y.to(dtype)
