"""Correct: no expansion at all; query heads reshaped to (B, H_kv, group, L, d_k) and einsum
against the shared KV heads; hand-written softmax with finfo.min and the mask as a multiplier."""

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads != 0:
        raise ValueError("D must be divisible by num_query_heads")
    if num_query_heads % num_kv_heads != 0:
        raise ValueError("num_query_heads must be divisible by num_kv_heads")
    d_k = D // num_query_heads
    G = num_query_heads // num_kv_heads
    q = (x @ W_q).reshape(B, L, num_kv_heads, G, d_k)
    k = (x @ W_k).reshape(B, L, num_kv_heads, d_k)
    v = (x @ W_v).reshape(B, L, num_kv_heads, d_k)
    s = torch.einsum("blhgd,bmhd->bhglm", q, k) * d_k ** -0.5           # (B, H_kv, G, L, L)
    s = s.reshape(B, num_query_heads, L, L)
    keep = None
    if mask is not None:
        keep = torch.broadcast_to(mask != 0, s.shape)
        s = torch.where(keep, s, torch.finfo(s.dtype).min)
    e = torch.exp(s - s.amax(dim=-1, keepdim=True))
    if keep is not None:
        e = e * keep
    den = e.sum(dim=-1, keepdim=True)
    p = e / torch.where(den > 0, den, torch.ones_like(den))
    y = torch.einsum("bhglm,bmhd->blhgd", p.reshape(B, num_kv_heads, G, L, L), v)
    return y.reshape(B, L, D) @ W_o
