"""Bug: attention written as softmax attention with the elu + 1 kernel in place of exp: the L x L
weights phi(Q) phi(K)^T, masked with a lower triangle when causal, normalised, times V. Right values
and gradients, quadratic work and memory on both paths.

Must fail: flops_scaling, memory_scaling
Mistake: quadratic_both_paths
"""

import torch
import torch.nn.functional as F


def linear_attention(query, key, value, causal=False):
    if query.dim() != 4 or key.shape != query.shape or value.dim() != 4 or value.shape[:3] != query.shape[:3]:
        raise ValueError("bad shapes")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = F.elu(query.to(work)) + 1, F.elu(key.to(work)) + 1, value.to(work)
    weights = torch.einsum("bhid,bhjd->bhij", q, k)                    # (B, H, L, L)
    if causal:
        weights = weights.tril()
    weights = weights / weights.sum(-1, keepdim=True)
    return torch.einsum("bhij,bhje->bhie", weights, v).to(dtype)
