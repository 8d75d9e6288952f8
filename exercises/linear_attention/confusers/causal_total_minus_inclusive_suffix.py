"""Confuser: the causal prefix sums are computed as the total minus a reversed cumulative sum (a
suffix sum) that includes token i, so query i sees keys j < i; there is no running state to read too
early. Its output is state_read_before_update's, so that name may be given, but its sentence must
lead with what the replay proves (query i saw keys j < i, an exclusive prefix sum) and give the
state read before its update only as an example. From a confuser hunt.

Must not name: no_denominator, causal_quadratic_detour, eps_in_denominator
May name: state_read_before_update
"""
import numpy as np


def _phi(x):
    """elu(x) + 1, i.e. x + 1 for x > 0 and exp(x) otherwise (exp of min(x, 0): no overflow)."""
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(query, key, value, causal=False):
    """Kernelised attention with phi(x) = elu(x) + 1.

    Args:
        query: (B, H, L, d_k) array. key: (B, H, L, d_k) array. value: (B, H, L, d_v) array.
        causal: sum over keys j <= i for query i (prefix sums) instead of over all keys.

    Returns:
        (B, H, L, d_v) array in query's dtype.

    Raises:
        ValueError: an input is not 4-D, ``query``/``key``/``value`` differ in (B, H, L), or
            ``query`` and ``key`` differ in d_k.
    """
    for name, a in (("query", query), ("key", key), ("value", value)):
        if np.ndim(a) != 4:
            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {np.shape(a)}")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3]:
        raise ValueError(f"query, key and value must share (B, H, L): got {query.shape}, {key.shape}, {value.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share d_k: got {query.shape[-1]} and {key.shape[-1]}")
    dtype = query.dtype
    work = np.float32 if dtype == np.float16 else dtype         # half precision accumulates in float32
    q, k, v = (a.astype(work) for a in (query, key, value))
    phi_q, phi_k = _phi(q), _phi(k)                             # (B, H, L, d_k), > 0
    if not causal:
        S = np.swapaxes(phi_k, -1, -2) @ v                      # (B, H, d_k, d_v)
        z = phi_k.sum(axis=2)                                   # (B, H, d_k)
        num = phi_q @ S                                         # (B, H, L, d_v)
        den = phi_q @ z[..., None]                              # (B, H, L, 1)
    else:
        kv = phi_k[..., :, None] * v[..., None, :]
        # prefix = total - suffix; the suffix (reverse cumsum) wrongly includes token i itself
        S = kv.sum(axis=2, keepdims=True) - np.flip(np.cumsum(np.flip(kv, 2), axis=2), 2)
        z = phi_k.sum(axis=2, keepdims=True) - np.flip(np.cumsum(np.flip(phi_k, 2), axis=2), 2)
        num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)
        den = np.sum(phi_q * z, axis=-1, keepdims=True)         # (B, H, L, 1)
    return (num / den).astype(dtype)
