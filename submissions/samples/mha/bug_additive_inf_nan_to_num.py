"""Bug (issue 15): an additive -inf mask with nan_to_num after the softmax. The forward output is
right everywhere, fully masked rows included (NaN -> 0), but the gradients of query, key, W_q and
W_k are NaN wherever a query row is fully masked: the softmax of an all -inf row has no derivative.

Mistake: nan_gradient_fully_masked_rows
Must fail: grad_edge_cases
"""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads != 0:
        raise ValueError(f"d_model {D} is not divisible by num_heads {num_heads}")
    d_k = D // num_heads
    q = (query @ W_q).view(B, L_q, num_heads, d_k).transpose(1, 2)
    k = (key @ W_k).view(B, L_k, num_heads, d_k).transpose(1, 2)
    v = (value @ W_v).view(B, L_k, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        bias = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(mask == 0, float("-inf"))
        scores = scores + bias
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    y = (weights @ v).transpose(1, 2).reshape(B, L_q, D)
    return y @ W_o
