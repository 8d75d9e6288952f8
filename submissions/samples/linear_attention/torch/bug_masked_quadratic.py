"""Bug: kernel trick when not causal, but the causal path forms phi(Q) phi(K)^T (L x L), keeps its
lower triangle and normalises the rows: right values and gradients, quadratic work and memory.

Must fail: flops_scaling, memory_scaling
Mistake: causal_quadratic_detour
"""

import torch
import torch.nn.functional as F


def linear_attention(query, key, value, causal=False):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError("4-D")
    if query.shape != key.shape or value.shape[:3] != key.shape[:3]:
        raise ValueError("shapes")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = F.elu(query.to(work)) + 1, F.elu(key.to(work)) + 1, value.to(work)
    if causal:
        w = torch.tril(q @ k.transpose(-2, -1))                        # (B, H, L, L)
        out = (w @ v) / w.sum(-1, keepdim=True)
    else:
        out = (q @ (k.transpose(-2, -1) @ v)) / (q @ k.sum(2).unsqueeze(-1))
    return out.to(dtype)
