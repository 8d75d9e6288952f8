"""Bug: W_k and W_v expanded to every query head whenever num_kv_heads > 1; with one KV head (MQA) keys
and values are projected once, as they should be. A probe that ran MQA only gave full marks (helper
hunt); the batch-of-two path at 2 KV heads sees the expanded work.

Must fail: kv_flops
Mistake: kv_weights_expanded
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
    if num_kv_heads == 1:
        k = (x @ W_k).unsqueeze(1)                        # (B, 1, L, dk), broadcast over query heads
        v = (x @ W_v).unsqueeze(1)
    else:
        W_k_full = W_k.view(D, num_kv_heads, d_k).repeat_interleave(g, dim=1).reshape(D, D)
        W_v_full = W_v.view(D, num_kv_heads, d_k).repeat_interleave(g, dim=1).reshape(D, D)
        k = (x @ W_k_full).view(B, L, num_query_heads, d_k).transpose(1, 2)
        v = (x @ W_v_full).view(B, L, num_query_heads, d_k).transpose(1, 2)
    s = q @ k.transpose(-1, -2) / math.sqrt(d_k)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.nan_to_num(s.softmax(-1), nan=0.0)
    return (p @ v).transpose(1, 2).reshape(B, L, D) @ W_o
