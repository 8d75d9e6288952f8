"""Bug: reaches the SDPA kernel through torch.ops with a computed name (caught by the op audit, not the static scan).

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
    k = (x @ W_k).view(B, L, num_kv_heads, d_k).transpose(1, 2).repeat_interleave(g, dim=1)
    v = (x @ W_v).view(B, L, num_kv_heads, d_k).transpose(1, 2).repeat_interleave(g, dim=1)
    kernel = getattr(getattr(torch.ops, "at" + "en"), "_scaled_dot_product_flash_attention_for_cpu")
    y = kernel(q, k, v, 0.0, False, attn_mask=None if mask is None else torch.where(mask.bool(), 0.0, float("-inf")).to(q.dtype))[0]
    return y.transpose(1, 2).reshape(B, L, D) @ W_o
