"""Correct: the RNN view with a running state (S, z) updated token by token (add token i, then read
it), rows collected in a list and stacked; phi(x) = x + 1 where positive, exp(min(x, 0)) elsewhere."""

import torch


def phi(x):
    return torch.where(x > 0, x + 1, torch.exp(x.clamp(max=0)))


def linear_attention(query, key, value, causal=False):
    if not (query.dim() == key.dim() == value.dim() == 4):
        raise ValueError("expected 4-D tensors")
    B, H, L, d_k = query.shape
    if tuple(key.shape) != (B, H, L, d_k) or tuple(value.shape[:3]) != (B, H, L):
        raise ValueError(f"bad shapes {tuple(query.shape)} {tuple(key.shape)} {tuple(value.shape)}")
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    fq, fk, v = phi(query.to(work)), phi(key.to(work)), value.to(work)
    if not causal:
        S = fk.transpose(-1, -2) @ v
        z = fk.sum(dim=-2)
        return ((fq @ S) / (fq * z.unsqueeze(-2)).sum(-1, keepdim=True)).to(query.dtype)
    S = torch.zeros(B, H, d_k, v.shape[-1], dtype=work)
    z = torch.zeros(B, H, d_k, dtype=work)
    rows = []
    for i in range(L):
        S = S + fk[:, :, i].unsqueeze(-1) * v[:, :, i].unsqueeze(-2)
        z = z + fk[:, :, i]
        q_i = fq[:, :, i]
        rows.append((q_i.unsqueeze(-2) @ S).squeeze(-2) / (q_i * z).sum(-1, keepdim=True))
    return torch.stack(rows, dim=2).to(query.dtype)
