"""Correct: K and V projected once at num_kv_heads width, then a loop over the query heads with a
hand-written masked softmax (max shift, exp, masked entries zeroed, divide by a clamped sum).

Stresses `kv_flops`: the per-head elementwise work is allowed; only projecting K/V counts there.
"""

import math

import torch


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads != 0 or num_query_heads % num_kv_heads != 0:
        raise ValueError(f"D={D}, num_query_heads={num_query_heads}, num_kv_heads={num_kv_heads} do not divide")
    d_k = D // num_query_heads
    group = num_query_heads // num_kv_heads
    q = x @ W_q                                                   # (B, L, D)
    k = x @ W_k                                                   # (B, L, H_kv * d_k)
    v = x @ W_v                                                   # (B, L, H_kv * d_k)
    allowed = None
    if mask is not None:
        allowed = torch.broadcast_to(mask != 0, (B, num_query_heads, L, L))
    heads = []
    for h in range(num_query_heads):
        j = h // group
        qh = q[:, :, h * d_k:(h + 1) * d_k]                       # (B, L, d_k)
        kh = k[:, :, j * d_k:(j + 1) * d_k]
        vh = v[:, :, j * d_k:(j + 1) * d_k]
        s = torch.matmul(qh, kh.transpose(-2, -1)) / math.sqrt(d_k)  # (B, L, L)
        if allowed is not None:
            s = torch.where(allowed[:, h], s, torch.full_like(s, -torch.inf))
        top = s.amax(dim=-1, keepdim=True)
        top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
        e = torch.exp(s - top)
        if allowed is not None:
            e = torch.where(allowed[:, h], e, torch.zeros_like(e))
        p = e / e.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)
        heads.append(p @ vh)                                      # (B, L, d_k)
    return torch.cat(heads, dim=-1) @ W_o
