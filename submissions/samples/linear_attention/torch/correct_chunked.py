"""Correct: chunkwise causal linear attention, chunks of 32 tokens: the lower triangle of
phi(Q_c) phi(K_c)^T inside a chunk, a carried state (S, z) across chunks; float64 kept as float64,
half precision in float32."""

import torch

CHUNK = 32


def linear_attention(query, key, value, causal=False):
    for t in (query, key, value):
        if t.ndim != 4:
            raise ValueError("4-D tensors only")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3] or query.shape[3] != key.shape[3]:
        raise ValueError("query, key and value shapes disagree")
    out_dtype = query.dtype
    calc = torch.float64 if out_dtype == torch.float64 else torch.float32
    q, k, v = (t.to(calc) for t in (query, key, value))
    q = torch.where(q > 0, q + 1, torch.exp(torch.minimum(q, torch.zeros_like(q))))
    k = torch.where(k > 0, k + 1, torch.exp(torch.minimum(k, torch.zeros_like(k))))
    if not causal:
        return ((q @ (k.transpose(2, 3) @ v)) / (q @ k.sum(2, keepdim=True).transpose(2, 3))).to(out_dtype)
    B, H, L, d_k = q.shape
    S = q.new_zeros(B, H, d_k, v.shape[-1])
    z = q.new_zeros(B, H, d_k, 1)
    outs = []
    for s in range(0, L, CHUNK):
        qc, kc, vc = q[:, :, s:s + CHUNK], k[:, :, s:s + CHUNK], v[:, :, s:s + CHUNK]
        a = torch.tril(qc @ kc.transpose(2, 3))
        outs.append((qc @ S + a @ vc) / (qc @ z + a.sum(-1, keepdim=True)))
        S = S + kc.transpose(2, 3) @ vc
        z = z + kc.sum(2).unsqueeze(-1)
    return torch.cat(outs, dim=2).to(out_dtype)
