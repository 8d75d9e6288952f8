"""Wrong: float16 input is accumulated in float32 as asked, but the states S and z are cast back to
float16 before the queries read them ("keep the state in the model's dtype"): S overflows 65504 where
the values are in the tens over 64 tokens. No case had a state beyond float16's range (full marks);
half_precision now has one. From a helper hunt.

Must fail: half_precision
Mistake: state_in_input_dtype
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
        S, z = S.astype(dtype).astype(work), z.astype(dtype).astype(work)
        num = phi_q @ S                                         # (B, H, L, d_v)
        den = phi_q @ z[..., None]                              # (B, H, L, 1)
    else:
        S = np.cumsum(phi_k[..., :, None] * v[..., None, :], axis=2)  # (B, H, L, d_k, d_v): S_i, j <= i
        z = np.cumsum(phi_k, axis=2)                            # (B, H, L, d_k): z_i
        S, z = S.astype(dtype).astype(work), z.astype(dtype).astype(work)
        num = np.einsum("bhld,bhlde->bhle", phi_q, S)           # (B, H, L, d_v)
        den = np.sum(phi_q * z, axis=-1, keepdims=True)         # (B, H, L, 1)
    return (num / den).astype(dtype)
