"""Confuser: float16 input is accumulated in float32 and the states S and z stay in float32, but the
numerator phi(q)^T S and the denominator phi(q)^T z are rounded to float16 (stored in the input's
dtype) before the division: they leave float16's range (65504) where the states are large, and the
quotient is inf/inf. The states are never stored in float16, so the bank's state_in_input_dtype (and
float16_accumulation, which does everything in float16) must not be named.

Must not name: state_in_input_dtype, float16_accumulation
"""
import numpy as np


def linear_attention(query, key, value, causal=False):
    for name, a in (("query", query), ("key", key), ("value", value)):
        if np.ndim(a) != 4:
            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {np.shape(a)}")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3]:
        raise ValueError(f"query, key and value must share (B, H, L): got {query.shape}, {key.shape}, {value.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share d_k: got {query.shape[-1]} and {key.shape[-1]}")
    dtype = query.dtype
    work = np.float32 if dtype == np.float16 else dtype
    q, k, v = (a.astype(work) for a in (query, key, value))
    phi_q = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0)))
    phi_k = np.where(k > 0, k + 1, np.exp(np.minimum(k, 0)))
    if not causal:
        S = np.swapaxes(phi_k, -1, -2) @ v
        z = phi_k.sum(axis=2)
        num, den = phi_q @ S, phi_q @ z[..., None]
    else:
        S = np.cumsum(phi_k[..., :, None] * v[..., None, :], axis=2)
        z = np.cumsum(phi_k, axis=2)
        num = np.einsum("bhld,bhlde->bhle", phi_q, S)
        den = np.sum(phi_q * z, axis=-1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        num, den = num.astype(dtype).astype(work), den.astype(dtype).astype(work)  # rounded to the input's dtype
        return (num / den).astype(dtype)
