"""Correct: heads by torch.split along the last axis, per-head loop, softmax by logsumexp, torch.cat back."""
import math
import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads != 0:
        raise ValueError(f"d_model {D} not divisible by num_heads {num_heads}")
    d_k = D // num_heads
    Q = torch.matmul(query, W_q)
    K = torch.matmul(key, W_k)
    V = torch.matmul(value, W_v)
    keep = None
    if mask is not None:
        keep = (mask != 0)
        while keep.dim() < 4:
            keep = keep.unsqueeze(0)
        keep = keep.expand(B, num_heads, L_q, L_k)
    outs = []
    for h, (q, k, v) in enumerate(zip(Q.split(d_k, -1), K.split(d_k, -1), V.split(d_k, -1))):
        s = torch.matmul(q, k.transpose(-1, -2)) * (d_k ** -0.5)
        if keep is not None:
            kh = keep[:, h]
            s = s.masked_fill(~kh, torch.finfo(s.dtype).min)
            p = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True)) * kh.any(-1, keepdim=True)
        else:
            p = torch.exp(s - torch.logsumexp(s, dim=-1, keepdim=True))
        outs.append(p @ v)
    return torch.cat(outs, dim=-1) @ W_o
