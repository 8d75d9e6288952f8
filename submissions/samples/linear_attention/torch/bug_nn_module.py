"""Bug: wraps the computation in an nn.Module, which the exercise forbids.

Must fail: values
Mistake: forbidden_api
"""

import torch
import torch.nn.functional as F
from torch import nn


class LinearAttention(nn.Module):
    def forward(self, q, k, v, causal):
        q, k = F.elu(q) + 1, F.elu(k) + 1
        if causal:
            S = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), 2)
            return torch.einsum("bhld,bhlde->bhle", q, S) / (q * k.cumsum(2)).sum(-1, keepdim=True)
        return (q @ (k.transpose(-1, -2) @ v)) / (q @ k.sum(2).unsqueeze(-1))


def linear_attention(query, key, value, causal=False):
    if query.dim() != 4 or key.shape != query.shape or value.shape[:3] != query.shape[:3]:
        raise ValueError("bad shapes")
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    out = LinearAttention()(query.to(work), key.to(work), value.to(work), causal)
    return out.to(query.dtype)
