"""Confuser: every step runs in x's dtype (float64 stays float64), but the output projection is written
into a preallocated float32 buffer (`np.matmul(y, W_o, out=buffer)`) and cast back. The float64 answer
is rounded to float32 once, at the end: every value is a float32 number, but the computation never ran
in float32.

Must not name: float32_internals, "computation ran in float32"
"""
import math

import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    """Grouped-query self-attention over ``x``.

    Args:
        x: (B, L, D) float32/float64 array.
        W_q, W_o: (D, D) weights; W_k, W_v: (D, num_kv_heads * d_k) with d_k = D // num_query_heads.
        num_query_heads: H_q, must divide D.
        num_kv_heads: H_kv, must divide H_q.
        mask: None, or a bool/numeric array broadcastable to (B, H_q, L, L); nonzero = may attend.

    Returns:
        (B, L, D) array in ``x``'s dtype.

    Raises:
        ValueError: ``D % num_query_heads != 0`` or ``num_query_heads % num_kv_heads != 0``.
    """
    B, L, D = x.shape
    if num_query_heads <= 0 or D % num_query_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_query_heads={num_query_heads}")
    if num_kv_heads <= 0 or num_query_heads % num_kv_heads != 0:
        raise ValueError(f"num_query_heads={num_query_heads} is not divisible by num_kv_heads={num_kv_heads}")
    H_q, H_kv, d_k = num_query_heads, num_kv_heads, D // num_query_heads
    group = H_q // H_kv
    q = (x @ W_q).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)    # (B, H_q, L, d_k)
    k = (x @ W_k).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k) projected at H_kv heads
    v = (x @ W_v).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k)
    k = np.repeat(k, group, axis=1)                                # (B, H_q, L, d_k) head h -> KV head h // group
    v = np.repeat(v, group, axis=1)                                # (B, H_q, L, d_k)
    att = q @ k.transpose(0, 1, 3, 2) / np.asarray(math.sqrt(d_k), dtype=x.dtype)  # (B, H_q, L, L)
    if mask is not None:
        att = np.where(np.asarray(mask) != 0, att, -np.inf)        # (B, H_q, L, L)
    m = np.max(att, axis=-1, keepdims=True)                        # (B, H_q, L, 1)
    m = np.where(np.isfinite(m), m, 0).astype(att.dtype)
    e = np.exp(att - m)                                            # (B, H_q, L, L)
    s = np.sum(e, axis=-1, keepdims=True)                          # (B, H_q, L, 1)
    att = np.divide(e, s, out=np.zeros_like(e), where=s > 0)       # all-masked row -> 0
    y = att @ v                                                    # (B, H_q, L, d_k)
    y = y.transpose(0, 2, 1, 3).reshape(B, L, D)                   # (B, L, D)
    out = np.empty((B, L, D), dtype=np.float32)
    np.matmul(y, W_o, out=out, casting='same_kind')
    return out.astype(x.dtype, copy=False)                   # (B, L, D)
