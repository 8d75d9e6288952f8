"""Bug: the mask added to the scores, as if it were an additive bias (0 / -inf): a 0/1 or 0/3
mask hides nothing and shifts the scores of the keys it allows.

Must fail: masks
Mistake: mask_added
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError("window must be >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = query.astype(work), key.astype(work), value.astype(work)
    W = window if causal else 2 * window - 1
    j = (np.arange(L_q) + L_k - L_q - window + 1)[:, None] + np.arange(W)
    keep = (j >= 0) & (j < L_k)
    j = np.clip(j, 0, L_k - 1)
    s = np.einsum("bhqd,bhqwd->bhqw", q, k[:, :, j]) / math.sqrt(d_k)
    if mask is not None:
        s = s + np.broadcast_to(mask, (B, H, L_q, L_k))[:, :, np.arange(L_q)[:, None], j].astype(work)
    s = np.where(keep, s, -np.inf)
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isinf(mx), 0, mx))
    z = e.sum(-1, keepdims=True)
    return np.einsum("bhqw,bhqwd->bhqd", e / np.where(z > 0, z, 1), v[:, :, j]).astype(query.dtype)
