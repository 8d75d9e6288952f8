"""Correct: keys and values projected at num_kv_heads heads, with the 1/sqrt(d_k) scale folded into the
key weights (W_k * scale), and a grouped einsum over (kv head, group) without repeating K/V. Its K/V
work is counted through the scaled weights, and is the reference's.
"""

import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if num_kv_heads < 1 or D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("bad head counts")
    d_k = D // num_query_heads
    g = num_query_heads // num_kv_heads
    q = (x @ W_q).view(B, L, num_kv_heads, g, d_k).permute(0, 2, 3, 1, 4)          # (B, Hkv, g, L, dk)
    k = (x @ (W_k * (1.0 / math.sqrt(d_k)))).view(B, L, num_kv_heads, d_k).transpose(1, 2)  # (B, Hkv, L, dk)
    v = (x @ W_v).view(B, L, num_kv_heads, d_k).transpose(1, 2)
    s = torch.einsum("bhgqd,bhkd->bhgqk", q, k)
    if mask is not None:
        keep = torch.broadcast_to(torch.as_tensor(mask) != 0, (B, num_query_heads, L, L))
        keep = keep.reshape(B, num_kv_heads, g, L, L)
        s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    z = e.sum(-1, keepdim=True)
    p = e / torch.where(z > 0, z, torch.ones_like(z))
    o = torch.einsum("bhgqk,bhkd->bhgqd", p, v)                                     # (B, Hkv, g, L, dk)
    return o.permute(0, 3, 1, 2, 4).reshape(B, L, D) @ W_o
