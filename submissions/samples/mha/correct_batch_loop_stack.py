"""Correct: explicit loops over batch and heads, list comprehension + torch.stack, hand softmax with max shift, finite fill and a denominator clamp."""
import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.size(1)
    H = num_heads
    if H <= 0 or D % H:
        raise ValueError("num_heads must divide d_model")
    d_k = D // H
    scale = 1.0 / float(d_k) ** 0.5
    if mask is not None:
        m = torch.broadcast_to(mask, (B, H, L_q, L_k)).bool()
    rows = []
    for b in range(B):
        qb, kb, vb = query[b] @ W_q, key[b] @ W_k, value[b] @ W_v
        heads = []
        for h in range(H):
            cols = slice(h * d_k, (h + 1) * d_k)
            s = (qb[:, cols] @ kb[:, cols].T) * scale
            if mask is not None:
                s = torch.where(m[b, h], s, torch.full_like(s, -1e4 if s.dtype in (torch.float16,) else -1e30).clamp_min(torch.finfo(s.dtype).min))
            e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
            if mask is not None:
                e = e * m[b, h]
            p = e / e.sum(-1, keepdim=True).clamp_min(torch.finfo(e.dtype).tiny)
            heads.append(p @ vb[:, cols])
        rows.append(torch.cat(heads, dim=-1))
    return torch.stack(rows) @ W_o
