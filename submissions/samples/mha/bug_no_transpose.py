"""Bug: heads split by a reshape to (B, H, L, d_k) without the transpose (and merged back the same way).

Mistake: heads_split_without_transpose
Must fail: self_attention
"""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    d_k = D // num_heads
    q = (query @ W_q).reshape(B, num_heads, L_q, d_k)
    k = (key @ W_k).reshape(B, num_heads, L_k, d_k)
    v = (value @ W_v).reshape(B, num_heads, L_k, d_k)
    att = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))
    att = torch.nan_to_num(torch.softmax(att, dim=-1))
    return (att @ v).reshape(B, L_q, D) @ W_o
