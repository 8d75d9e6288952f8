"""Confuser: the feature maps, the state and the division all run in the input's dtype (float64 stays
float64), but the result is cast to float32 and back at the end (`.to(torch.float32).to(dtype)`, a
'safe' output type). The float64 answer is rounded to float32 once, at the end: every value is a float32
number, but the computation never ran in float32.

Must not name: float32_internals, "computation ran in float32"
"""
import torch


def _phi(x):
    """elu(x) + 1: x + 1 for x > 0, exp(x) otherwise."""
    return torch.where(x > 0, x + 1, torch.exp(torch.clamp(x, max=0)))


def linear_attention(query, key, value, causal=False):
    """Kernelised attention with phi(x) = elu(x) + 1.

    Args:
        query: (B, H, L, d_k) tensor. key: (B, H, L, d_k) tensor. value: (B, H, L, d_v) tensor.
        causal: sum over keys j <= i for query i (prefix sums) instead of over all keys.

    Returns:
        (B, H, L, d_v) tensor in query's dtype.

    Raises:
        ValueError: an input is not 4-D, the inputs differ in (B, H, L), or query and key differ in d_k.
    """
    for name, a in (("query", query), ("key", key), ("value", value)):
        if a.dim() != 4:
            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {tuple(a.shape)}")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3]:
        raise ValueError(f"query, key and value must share (B, H, L): got {tuple(query.shape)}, "
                         f"{tuple(key.shape)}, {tuple(value.shape)}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share d_k: got {query.shape[-1]} and {key.shape[-1]}")
    dtype = query.dtype
    work = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = (a.to(work) for a in (query, key, value))
    phi_q, phi_k = _phi(q), _phi(k)                             # (B, H, L, d_k), > 0
    if not causal:
        S = phi_k.transpose(-2, -1) @ v                         # (B, H, d_k, d_v)
        z = phi_k.sum(dim=2)                                    # (B, H, d_k)
        num = phi_q @ S                                         # (B, H, L, d_v)
        den = phi_q @ z.unsqueeze(-1)                           # (B, H, L, 1)
    else:
        S = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)  # (B, H, L, d_k, d_v): S_i, j <= i
        z = torch.cumsum(phi_k, dim=2)                          # (B, H, L, d_k): z_i
        num = torch.einsum("bhld,bhlde->bhle", phi_q, S)        # (B, H, L, d_v)
        den = (phi_q * z).sum(dim=-1, keepdim=True)             # (B, H, L, 1)
    return (num / den).to(torch.float32).to(dtype)   # 'safe' float32 output, then the caller's dtype
