"""softmax attention with exp swapped for the kernel: the L x L weights phi(Q) phi(K)^T (lower triangle when causal) were normalised row by row and multiplied by V on both paths; the values are right, but work and memory grow like L^2. Linear attention regroups the product: S = sum_j phi(k_j) v_j^T and z = sum_j phi(k_j) (prefix sums when causal), then phi(q_i)^T S / phi(q_i)^T z (Katharopoulos et al. 2020, eq. 4-6).

Must fail: flops_scaling, memory_scaling
"""

import torch


def _phi(x):
    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))


def linear_attention(query, key, value, causal=False):
    for name, a in (("query", query), ("key", key), ("value", value)):
        if a.dim() != 4:
            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {tuple(a.shape)}")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3]:
        raise ValueError("query, key and value must share (B, H, L)")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError("query and key must share d_k")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = (a.to(work) for a in (query, key, value))
    A = _phi(q) @ _phi(k).transpose(-2, -1)                     # (B, H, L, L): the weights, unnormalised
    if causal:
        A = torch.tril(A)
    A = A / A.sum(dim=-1, keepdim=True)                         # rows sum to 1
    return (A @ v).to(dtype)
