"""Bug (issue 15): an additive -inf mask with nan_to_num after the softmax. The forward output is
right everywhere, fully masked rows included (NaN -> 0), but the gradients of x, W_q and W_k are NaN
wherever a query row is fully masked: the softmax of an all -inf row has no derivative.

Must fail: grad_edge_cases
Mistake: additive_inf_mask_nan_to_num
"""

import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("num_query_heads must divide D and num_kv_heads must divide num_query_heads")
    d_k = D // num_query_heads
    group = num_query_heads // num_kv_heads
    q = (x @ W_q).view(B, L, num_query_heads, d_k).transpose(1, 2)
    k = (x @ W_k).view(B, L, num_kv_heads, d_k).transpose(1, 2).repeat_interleave(group, dim=1)
    v = (x @ W_v).view(B, L, num_kv_heads, d_k).transpose(1, 2).repeat_interleave(group, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(mask == 0, float("-inf"))
        scores = scores + bias
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return (weights @ v).transpose(1, 2).reshape(B, L, D) @ W_o
