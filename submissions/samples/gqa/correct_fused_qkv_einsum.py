"""Correct: one fused projection x @ [W_q | W_k | W_v] split into Q, K, V, grouped einsum over
(kv head, group member) without materialising repeated K/V, additive float mask built from
`torch.where`, softmax in float64 internally, fully masked rows set to 0."""

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads != 0:
        raise ValueError("d_model must be divisible by num_query_heads")
    if num_query_heads % num_kv_heads != 0:
        raise ValueError("num_query_heads must be divisible by num_kv_heads")
    d_k = D // num_query_heads
    g = num_query_heads // num_kv_heads
    kv = num_kv_heads * d_k
    qkv = x @ torch.cat([W_q, W_k, W_v], dim=1)                     # (B, L, D + 2 * kv)
    q, k, v = torch.split(qkv, [D, kv, kv], dim=-1)
    q = q.reshape(B, L, num_kv_heads, g, d_k)                        # query head h = (h // g, h % g)
    k = k.reshape(B, L, num_kv_heads, d_k)
    v = v.reshape(B, L, num_kv_heads, d_k)
    s = torch.einsum("bqngd,bknd->bngqk", q.double(), k.double()) / d_k ** 0.5   # (B, H_kv, g, L, L)
    if mask is not None:
        keep = torch.broadcast_to(mask != 0, (B, num_query_heads, L, L)).reshape(B, num_kv_heads, g, L, L)
        s = s + torch.where(keep, 0.0, float("-inf")).to(s.dtype)
        any_key = keep.any(dim=-1, keepdim=True)
        s = torch.where(any_key, s, torch.zeros_like(s))
        p = torch.softmax(s, dim=-1) * any_key
    else:
        p = torch.softmax(s, dim=-1)
    o = torch.einsum("bngqk,bknd->bqngd", p, v.double()).reshape(B, L, D).to(x.dtype)
    return o @ W_o
