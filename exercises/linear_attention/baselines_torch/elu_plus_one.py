"""Baseline, PyTorch track: linear attention with phi = F.elu(x) + 1, as the paper's code writes it
(``fast_transformers.feature_maps.elu_feature_map``), without its epsilon.

Correct, but for features far below zero ``elu(x) + 1 = (exp(x) - 1) + 1`` cancels: an absolute error
of about one float32 ulp of 1 on a phi of ``exp(x)`` (2e-5 relative at ``x = -6``), which the reference
does not make. It runs on the host only, beside the reference, so that the tolerance covers this
standard formulation (``grader.judge.tolerance``). Half precision is computed in float32.
"""

import torch
import torch.nn.functional as F


def linear_attention(query, key, value, causal=False):
    """phi(q_i)^T S / phi(q_i)^T z with phi = F.elu + 1; (B, H, L, d_v) in query's dtype."""
    if any(a.dim() != 4 for a in (query, key, value)) or query.shape[:3] != key.shape[:3] \
            or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("query, key, value must be (B, H, L, d_k), (B, H, L, d_k), (B, H, L, d_v)")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = (a.to(work) for a in (query, key, value))
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1                              # (B, H, L, d_k)
    if causal:
        S = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)      # (B, H, L, d_k, d_v)
        z = torch.cumsum(phi_k, dim=2)                                     # (B, H, L, d_k)
        out = torch.einsum("bhld,bhlde->bhle", phi_q, S) / (phi_q * z).sum(-1, keepdim=True)
    else:
        out = (phi_q @ (phi_k.transpose(-2, -1) @ v)) / (phi_q @ phi_k.sum(dim=2).unsqueeze(-1))
    return out.to(dtype)
