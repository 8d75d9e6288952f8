"""Bug: a (B, 1, 1, L_k) padding mask is turned into (B, 1, L, 1) and applied over the query axis.

Mistake: padding_on_queries
Must fail: padding_mask
"""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    d_k = D // num_heads
    q = (query @ W_q).view(B, L_q, num_heads, d_k).transpose(1, 2)
    k = (key @ W_k).view(B, L_k, num_heads, d_k).transpose(1, 2)
    v = (value @ W_v).view(B, L_k, num_heads, d_k).transpose(1, 2)
    att = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        if mask.dim() == 4 and mask.shape[2] == 1:
            mask = mask.transpose(-1, -2)
        att = att.masked_fill(mask == 0, float("-inf"))
    att = torch.nan_to_num(torch.softmax(att, dim=-1))
    y = (att @ v).transpose(1, 2).reshape(B, L_q, D)
    return y @ W_o
