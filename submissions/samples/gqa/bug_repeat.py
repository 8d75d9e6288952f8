"""Bug: KV heads expanded with .repeat (query head h reads KV head h % H_kv) instead of repeat_interleave.

Must fail: head_mapping
Mistake: heads_mapped_with_repeat
"""

import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("bad head counts")
    d_k = D // num_query_heads
    g = num_query_heads // num_kv_heads
    q = (x @ W_q).view(B, L, num_query_heads, d_k).transpose(1, 2)
    k = (x @ W_k).view(B, L, num_kv_heads, d_k).transpose(1, 2).repeat(1, g, 1, 1)
    v = (x @ W_v).view(B, L, num_kv_heads, d_k).transpose(1, 2).repeat(1, g, 1, 1)
    s = q @ k.transpose(-1, -2) / math.sqrt(d_k)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.nan_to_num(s.softmax(-1), nan=0.0)
    return (p @ v).transpose(1, 2).reshape(B, L, D) @ W_o
