"""Bug: F.scaled_dot_product_attention with enable_gqa=True (forbidden).

Must fail: values
Mistake: forbidden_api
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
    k = (x @ W_k).view(B, L, num_kv_heads, d_k).transpose(1, 2)
    v = (x @ W_v).view(B, L, num_kv_heads, d_k).transpose(1, 2)
    import torch.nn.functional as F
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if mask is None else mask.bool(), enable_gqa=True)
    return y.transpose(1, 2).reshape(B, L, D) @ W_o
