"""Correct: a loop over query heads picking KV head h // group by column slices; float32 compute
for half inputs; additive -1e9 bias with fully masked rows zeroed."""

import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    dtype = x.dtype
    if dtype in (torch.float16, torch.bfloat16):
        x, W_q, W_k, W_v, W_o = (t.float() for t in (x, W_q, W_k, W_v, W_o))
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError(f"invalid heads: D={D}, H_q={num_query_heads}, H_kv={num_kv_heads}")
    d_k = D // num_query_heads
    group = num_query_heads // num_kv_heads
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    outs = []
    for h in range(num_query_heads):
        j = h // group
        q, k, v = Q[..., h * d_k:(h + 1) * d_k], K[..., j * d_k:(j + 1) * d_k], V[..., j * d_k:(j + 1) * d_k]
        s = q @ k.transpose(1, 2) / math.sqrt(d_k)                      # (B, L, L)
        if mask is not None:
            m = torch.broadcast_to(mask != 0, (B, num_query_heads, L, L))[:, h]
            s = s + (~m) * -1e9
            p = torch.softmax(s, dim=-1) * m.any(dim=-1, keepdim=True)
        else:
            p = torch.softmax(s, dim=-1)
        outs.append(p @ v)
    return (torch.cat(outs, dim=-1) @ W_o).to(dtype)
