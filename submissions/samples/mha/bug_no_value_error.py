"""Bug: no ValueError when D % num_heads != 0 (d_k is floored and the reshape fails with a RuntimeError).

Mistake: no_value_error
Must fail: bad_num_heads
"""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    d_k = D // num_heads
    q = (query @ W_q).view(B, L_q, num_heads, d_k).transpose(1, 2)
    k = (key @ W_k).view(B, -1, num_heads, d_k).transpose(1, 2)
    v = (value @ W_v).view(B, -1, num_heads, d_k).transpose(1, 2)
    att = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        att = att.masked_fill(mask == 0, float("-inf"))
    att = torch.nan_to_num(torch.softmax(att, dim=-1))
    return (att @ v).transpose(1, 2).reshape(B, L_q, D) @ W_o
