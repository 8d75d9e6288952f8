"""Bug: phi(x) = torch.where(x > 0, x + 1, torch.exp(x)). The forward values are right everywhere,
but exp(x) is inf for features above ~88 in float32, and where's backward sends 0 * inf = NaN into
the gradient of such a feature (pytorch/pytorch#68425).

Must fail: gradients
Mistake: where_exp_gradient
"""

import torch


def linear_attention(query, key, value, causal=False):
    if query.dim() != 4 or key.dim() != 4 or value.dim() != 4:
        raise ValueError("query, key, value must be 4-D")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("shape mismatch")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = query.to(work), key.to(work), value.to(work)
    q = torch.where(q > 0, q + 1, torch.exp(q))
    k = torch.where(k > 0, k + 1, torch.exp(k))
    if causal:
        S = torch.cumsum(k[..., :, None] * v[..., None, :], dim=2)
        z = torch.cumsum(k, dim=2)
        out = (q[..., None, :] @ S).squeeze(-2) / (q * z).sum(-1, keepdim=True)
    else:
        out = (q @ (k.transpose(-1, -2) @ v)) / (q @ k.sum(dim=2)[..., None])
    return out.to(dtype)
