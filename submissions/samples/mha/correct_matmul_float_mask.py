"""Correct: torch.matmul with an explicit transpose, the mask turned into a float 0/1 multiplier,
softmax via logsumexp, fully masked rows handled by the multiplier."""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads != 0:
        raise ValueError(f"{D} is not a multiple of {num_heads}")
    d_k = D // num_heads
    split = lambda t: torch.transpose(t.reshape(B, t.shape[1], num_heads, d_k), 1, 2)  # noqa: E731
    q, k, v = split(torch.matmul(query, W_q)), split(torch.matmul(key, W_k)), split(torch.matmul(value, W_v))
    s = torch.matmul(q, torch.transpose(k, 2, 3)) / math.sqrt(d_k)
    if mask is None:
        p = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True))
    else:
        keep = (mask != 0).to(s.dtype)
        s = s - (1.0 - keep) * 1e30 if s.dtype == torch.float64 else s.masked_fill(keep == 0, -1e30)
        p = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True)) * keep
    y = torch.matmul(p, v).transpose(1, 2).reshape(B, L_q, D)
    return torch.matmul(y, W_o)
