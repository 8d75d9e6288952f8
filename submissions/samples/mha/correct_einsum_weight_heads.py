"""Correct: projections as einsums against W viewed as (D, H, d_k) (no reshape of activations),
scores and outputs by einsum over heads, the mask applied with torch.where and -inf, fully masked
rows set to 0 before the softmax (so no NaN, in values or gradients) and their weights zeroed after
it; half inputs computed in float32."""

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError("num_heads must divide d_model")
    H, d = num_heads, D // num_heads
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    query, key, value = query.to(work), key.to(work), value.to(work)
    W_q, W_k, W_v, W_o = W_q.to(work), W_k.to(work), W_v.to(work), W_o.to(work)
    q = torch.einsum("bld,dhe->bhle", query, W_q.view(D, H, d))          # (B, H, L_q, d)
    k = torch.einsum("bld,dhe->bhle", key, W_k.view(D, H, d))            # (B, H, L_k, d)
    v = torch.einsum("bld,dhe->bhle", value, W_v.view(D, H, d))          # (B, H, L_k, d)
    s = torch.einsum("bhqe,bhke->bhqk", q, k) * d ** -0.5               # (B, H, L_q, L_k)
    if mask is not None:
        keep = torch.broadcast_to(mask != 0, s.shape)
        live = keep.any(dim=-1, keepdim=True)
        s = torch.where(keep, s, torch.tensor(float("-inf"), dtype=s.dtype))
        s = torch.where(live, s, torch.zeros_like(s))
        p = torch.softmax(s, dim=-1) * live
    else:
        p = torch.softmax(s, dim=-1)
    y = torch.einsum("bhqk,bhke->bqhe", p, v).reshape(B, L_q, D)
    return (y @ W_o).to(dtype)
