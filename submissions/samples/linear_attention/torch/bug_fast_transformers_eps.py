"""Bug: the denominator of fast_transformers' LinearAttention, Z = 1 / (Q . K_sum + eps) with
eps = 1e-6; the contract has no epsilon, and where every feature is far below zero the
denominators are ~1e-4.

Must fail: large_magnitudes
Mistake: eps_in_denominator
"""

import torch
import torch.nn.functional as F


def linear_attention(query, key, value, causal=False, eps=1e-6):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError("need 4-D")
    if query.shape != key.shape or key.shape[:3] != value.shape[:3]:
        raise ValueError("shape mismatch")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    Q, K, V = F.elu(query.to(work)) + 1, F.elu(key.to(work)) + 1, value.to(work)
    if causal:
        KV = torch.cumsum(torch.einsum("nhld,nhlm->nhldm", K, V), dim=2)
        Z = 1 / (torch.einsum("nhld,nhld->nhl", Q, K.cumsum(2)) + eps)
        out = torch.einsum("nhld,nhldm,nhl->nhlm", Q, KV, Z)
    else:
        KV = torch.einsum("nhsd,nhsm->nhdm", K, V)
        Z = 1 / (torch.einsum("nhld,nhd->nhl", Q, K.sum(dim=2)) + eps)
        out = torch.einsum("nhld,nhdm,nhl->nhlm", Q, KV, Z)
    return out.to(dtype)
