"""Correct: heads folded into the batch ((B*H, L, d_k)), scores with torch.baddbmm adding a
precomputed bias (0 where allowed, the dtype's lowest value where masked), softmax, then the
weights of fully masked rows multiplied by 0; output through bmm and a final projection."""

import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads != 0:
        raise ValueError(f"D={D} is not a multiple of num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype

    def heads(x, W, L):
        return (x.to(work) @ W.to(work)).reshape(B, L, H, d_k).permute(0, 2, 1, 3).reshape(B * H, L, d_k)

    q, k, v = heads(query, W_q, L_q), heads(key, W_k, L_k), heads(value, W_v, L_k)
    bias = torch.zeros(B * H, L_q, L_k, dtype=work)
    live = None
    if mask is not None:
        keep = torch.broadcast_to(mask != 0, (B, H, L_q, L_k)).reshape(B * H, L_q, L_k)
        bias = bias.masked_fill(~keep, torch.finfo(work).min)
        live = keep.any(dim=-1, keepdim=True)
    s = torch.baddbmm(bias, q, k.transpose(1, 2), alpha=1.0 / math.sqrt(d_k))   # (B*H, L_q, L_k)
    p = torch.softmax(s, dim=-1)
    if live is not None:
        p = p * live
    y = torch.bmm(p, v).reshape(B, H, L_q, d_k).permute(0, 2, 1, 3).reshape(B, L_q, D)
    return (y @ W_o.to(work)).to(dtype)
