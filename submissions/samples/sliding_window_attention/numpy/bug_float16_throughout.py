"""Bug: float16 arrays computed in float16 throughout: scores, exponentials and sums rounded to 11
bits at every step, where the contract accumulates half precision in float32.

Must fail: half_precision
Mistake: float16_accumulation
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError("window must be >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    W = window if causal else 2 * window - 1
    j = (np.arange(L_q) + L_k - L_q - window + 1)[:, None] + np.arange(W)
    keep = (j >= 0) & (j < L_k)
    j = np.clip(j, 0, L_k - 1)
    if mask is not None:
        keep = keep & (np.broadcast_to(mask, (B, H, L_q, L_k))[:, :, np.arange(L_q)[:, None], j] != 0)
    s = np.einsum("bhqd,bhqwd->bhqw", query, key[:, :, j]) * query.dtype.type(1 / math.sqrt(d_k))
    s = np.where(keep, s, -np.inf).astype(query.dtype)
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isinf(mx), 0, mx).astype(query.dtype))
    z = e.sum(-1, keepdims=True)
    return np.einsum("bhqw,bhqwd->bhqd", e / np.where(z > 0, z, 1).astype(query.dtype), value[:, :, j])
