"""Bug: projections through nn.Linear modules (forbidden: no nn.Module in this exercise).

Must fail: self_attention
Mistake: forbidden_api
"""

import math

import torch
from torch import nn


def _project(x, W):
    layer = nn.Linear(W.shape[0], W.shape[1], bias=False)
    with torch.no_grad():
        layer.weight.copy_(W.T)
    return layer(x)


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    d_k = D // num_heads
    q = _project(query, W_q).view(B, L_q, num_heads, d_k).transpose(1, 2)
    k = _project(key, W_k).view(B, -1, num_heads, d_k).transpose(1, 2)
    v = _project(value, W_v).view(B, -1, num_heads, d_k).transpose(1, 2)
    att = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))
    att = torch.nan_to_num(torch.softmax(att, dim=-1))
    return _project((att @ v).transpose(1, 2).reshape(B, L_q, D), W_o)
