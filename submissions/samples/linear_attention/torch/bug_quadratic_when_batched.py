"""Bug: the quadratic masked form phi(Q) phi(K)^T V (an L x L matrix) whenever the batch has more than
one sample; the linear running state only for a batch of one. A probe that ran a batch of one gave
full marks (helper hunt); the batch-of-two paths see the L x L work and memory.

Must fail: flops_scaling, memory_scaling
Mistake: quadratic_both_paths
"""

import torch
import torch.nn.functional as F


def linear_attention(query, key, value, causal=False):
    if any(a.dim() != 4 for a in (query, key, value)) or query.shape[:3] != key.shape[:3] \
            or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("bad shapes")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = (a.to(work) for a in (query, key, value))
    pq, pk = F.elu(q) + 1, F.elu(k) + 1
    if query.shape[0] > 1:                                              # quadratic path
        A = pq @ pk.transpose(-1, -2)
        if causal:
            A = torch.tril(A)
        return ((A @ v) / A.sum(-1, keepdim=True)).to(dtype)
    if causal:
        S = torch.cumsum(pk.unsqueeze(-1) * v.unsqueeze(-2), dim=2)
        z = torch.cumsum(pk, dim=2)
        out = torch.einsum("bhld,bhlde->bhle", pq, S) / (pq * z).sum(-1, keepdim=True)
    else:
        out = (pq @ (pk.transpose(-2, -1) @ v)) / (pq @ pk.sum(dim=2).unsqueeze(-1))
    return out.to(dtype)
