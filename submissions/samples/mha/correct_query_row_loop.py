"""Correct: one query row at a time (a loop over L_q), every head at once per row, hand softmax with a max shift and a guarded denominator; rows concatenated at the end. Stresses `flops_scaling` with L_q small products instead of one batched matmul."""
import math
import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, Lq, D = query.shape
    Lk = key.shape[1]
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    H, dk = num_heads, D // num_heads
    q = (query @ W_q).view(B, Lq, H, dk).transpose(1, 2)
    k = (key @ W_k).view(B, Lk, H, dk).transpose(1, 2)
    v = (value @ W_v).view(B, Lk, H, dk).transpose(1, 2)
    keep = None if mask is None else torch.broadcast_to(mask != 0, (B, H, Lq, Lk))
    rows = []
    for i in range(Lq):
        s = (q[:, :, i:i + 1] @ k.transpose(-1, -2)) / math.sqrt(dk)      # (B, H, 1, Lk)
        if keep is not None:
            s = s.masked_fill(~keep[:, :, i:i + 1], torch.finfo(s.dtype).min)
        e = torch.exp(s - s.amax(-1, keepdim=True))
        if keep is not None:
            e = e * keep[:, :, i:i + 1]
        z = e.sum(-1, keepdim=True)
        p = e / torch.where(z > 0, z, torch.ones_like(z))
        rows.append(p @ v)                                                  # (B, H, 1, dk)
    y = torch.cat(rows, dim=2).transpose(1, 2).reshape(B, Lq, D)
    return y @ W_o
