"""Bug: the whole (L_q, L_k) score matrix q @ k^T on arrays, a dense band built from index
comparisons and the mask, then a softmax over every key: right values, L^2 work and memory.

Must fail: memory_scaling, flops_scaling
Mistake: dense_band_attention
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError("window must be >= 1")
    L_q, L_k = query.shape[2], key.shape[2]
    work = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = query.astype(work), key.astype(work), value.astype(work)
    p = np.arange(L_q)[:, None] + L_k - L_q
    j = np.arange(L_k)[None, :]
    keep = ((j <= p) & (j > p - window)) if causal else (np.abs(p - j) < window)
    if mask is not None:
        keep = keep & (mask != 0)
    s = np.where(keep, q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]), -np.inf)
    mx = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(mx), mx, 0))
    z = e.sum(-1, keepdims=True)
    return ((e / np.where(z > 0, z, 1)) @ v).astype(query.dtype)
