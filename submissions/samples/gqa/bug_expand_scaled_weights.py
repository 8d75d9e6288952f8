"""Bug: W_k and W_v expanded to (D, D) so keys and values are projected at every query head, with the
1/sqrt(d_k) scale folded into W_k (W_k * scale) and W_v times 1.0: an elementwise transform of the
weights kept no provenance, and the K/V work escaped the probe (helper hunt).

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
    W_k_s = W_k * (1.0 / math.sqrt(d_k))               # scale folded into the key weights
    W_v_s = W_v.mul(1.0)
    W_k_full = W_k_s.view(D, num_kv_heads, d_k).repeat_interleave(g, dim=1).reshape(D, D)
    W_v_full = W_v_s.view(D, num_kv_heads, d_k).repeat_interleave(g, dim=1).reshape(D, D)
    k = (x @ W_k_full).view(B, L, num_query_heads, d_k).transpose(1, 2)
    v = (x @ W_v_full).view(B, L, num_query_heads, d_k).transpose(1, 2)
    s = q @ k.transpose(-1, -2)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.nan_to_num(s.softmax(-1), nan=0.0)
    return (p @ v).transpose(1, 2).reshape(B, L, D) @ W_o
