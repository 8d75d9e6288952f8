"""Confuser: the scores are scaled by 1/sqrt(group * d_k) (group = num_query_heads // num_kv_heads),
the group size taken for the KV head count. Where group == num_kv_heads (4 query heads over 2 KV heads,
most cases) that is 1/sqrt(num_kv_heads * d_k), the K projection's width; with 6 over 3, 8 over 2 or
one KV head it is not.

Must not name: logits_divided_by_kv_width, "num_kv_heads * d_k"
"""
import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    """Grouped-query self-attention over ``x`` (B, L, D); W_k, W_v: (D, num_kv_heads * d_k).

    Raises:
        ValueError: ``D % num_query_heads != 0`` or ``num_query_heads % num_kv_heads != 0``.
    """
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("bad head counts")
    d_k = D // num_query_heads
    group = num_query_heads // num_kv_heads
    q = (x @ W_q).view(B, L, num_query_heads, d_k).transpose(1, 2)   # (B, H_q, L, d_k)
    k = (x @ W_k).view(B, L, num_kv_heads, d_k).transpose(1, 2)      # (B, H_kv, L, d_k)
    v = (x @ W_v).view(B, L, num_kv_heads, d_k).transpose(1, 2)      # (B, H_kv, L, d_k)
    k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)  # (B, H_q, L, d_k)
    s = q @ k.transpose(-1, -2) / math.sqrt(group * d_k)             # wrong: should be sqrt(d_k)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.nan_to_num(s.softmax(-1), nan=0.0)
    return (p @ v).transpose(1, 2).reshape(B, L, D) @ W_o
