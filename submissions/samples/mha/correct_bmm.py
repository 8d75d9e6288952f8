"""Correct: heads folded into the batch and torch.bmm; computes in float32 for half inputs and
casts back; an additive mask bias of finfo.min; zero rows where every key is masked."""

import math

import torch


def _heads(x, B, H, d_k):
    return x.view(B, -1, H, d_k).permute(0, 2, 1, 3).reshape(B * H, -1, d_k)


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    query, key, value = query.to(work), key.to(work), value.to(work)
    W_q, W_k, W_v, W_o = (w.to(work) for w in (W_q, W_k, W_v, W_o))
    B, L_q, D = query.shape
    L_k = key.shape[1]
    H = num_heads
    if D % H:
        raise ValueError("D % num_heads != 0")
    d_k = D // H
    q, k, v = _heads(query @ W_q, B, H, d_k), _heads(key @ W_k, B, H, d_k), _heads(value @ W_v, B, H, d_k)
    scores = torch.bmm(q, k.transpose(1, 2)).view(B, H, L_q, L_k) / math.sqrt(d_k)
    if mask is not None:
        allowed = torch.broadcast_to(mask.bool(), (B, H, L_q, L_k))
        scores = scores + (~allowed).to(work) * torch.finfo(work).min
        p = torch.softmax(scores, dim=-1) * allowed.any(dim=-1, keepdim=True)
    else:
        p = torch.softmax(scores, dim=-1)
    y = torch.bmm(p.reshape(B * H, L_q, L_k), v).view(B, H, L_q, d_k).transpose(1, 2).reshape(B, L_q, D)
    return (y @ W_o).to(dtype)
