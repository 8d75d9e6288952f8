"""Correct: a Python loop over heads with column slices and a hand-written softmax; masked
scores set to a large negative number, fully masked rows zeroed by multiplying with the mask."""

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    D = query.shape[-1]
    if D % num_heads != 0:
        raise ValueError("num_heads must divide the model width")
    d_k = D // num_heads
    Q, K, V = query @ W_q, key @ W_k, value @ W_v
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        s = Q[..., cols] @ K[..., cols].transpose(-1, -2) * d_k ** -0.5      # (B, L_q, L_k)
        if mask is not None:
            m = mask.to(torch.bool)
            m = m[:, h] if m.dim() == 4 and m.shape[1] > 1 else (m[:, 0] if m.dim() == 4 else m)
            s = torch.where(m, s, torch.full_like(s, -1e9))
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        p = e / e.sum(dim=-1, keepdim=True)
        if mask is not None:
            p = p * m
        heads.append(p @ V[..., cols])
    return torch.cat(heads, dim=-1) @ W_o
