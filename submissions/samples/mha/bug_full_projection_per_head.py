"""Wrong (complexity only): for every head it projects the full width and keeps that head's columns, so
the projections cost num_heads times the work.

Must fail: flops_scaling
Mistake: full_projection_per_head
"""
import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError("d_model must be divisible by num_heads")
    d_k = D // num_heads
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        q = (query @ W_q)[..., cols]                      # full projection, one head kept
        k = (key @ W_k)[..., cols]
        v = (value @ W_v)[..., cols]
        scores = q @ k.transpose(-1, -2) / math.sqrt(d_k)
        if mask is not None:
            m = mask.bool() if mask.dtype != torch.bool else mask
            m = m[:, h] if m.dim() == 4 and m.shape[1] > 1 else (m[:, 0] if m.dim() == 4 else m)
            scores = scores.masked_fill(~m, float("-inf"))
        w = torch.softmax(scores, dim=-1)
        w = torch.nan_to_num(w, nan=0.0)
        heads.append(w @ v)
    return torch.cat(heads, dim=-1) @ W_o
