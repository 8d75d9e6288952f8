"""Correct: einsum throughout; masked_fill with -inf, then NaN rows (all keys masked) set to 0."""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError(f"D={D} must be divisible by num_heads={num_heads}")
    d_k = D // num_heads
    q = torch.einsum("bld,de->ble", query, W_q).reshape(B, L_q, num_heads, d_k)
    k = torch.einsum("bld,de->ble", key, W_k).reshape(B, -1, num_heads, d_k)
    v = torch.einsum("bld,de->ble", value, W_v).reshape(B, -1, num_heads, d_k)
    scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    out = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, L_q, D)
    return torch.einsum("bld,de->ble", out, W_o)
