"""Bug: reaches the fused attention kernel through a string built at run time (caught by the op audit).

Must fail: self_attention
Mistake: forbidden_api
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
    keep = None if mask is None else mask.bool()
    op = getattr(torch.ops.aten, "scaled_dot_" + "product_attention")
    y = op(q, k, v, keep)
    return y.transpose(1, 2).reshape(B, L_q, D) @ W_o
