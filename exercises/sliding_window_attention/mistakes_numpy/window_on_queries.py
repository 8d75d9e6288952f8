"""the window was laid over the queries instead of the keys: each key's weights were normalised over the queries whose window holds it (a softmax down the band's query axis), so a query's weights over its own window do not sum to 1; softmax over the keys of each query's window.

Must fail: values, non_causal
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """The mutant: the band of the contract, normalised per key over the queries (dense, host only)."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = query.astype(work), key.astype(work), value.astype(work)
    p = (np.arange(L_q) + (L_k - L_q))[:, None]
    j = np.arange(L_k)[None, :]
    keep = ((j <= p) & (j > p - window)) if causal else (np.abs(p - j) < window)   # (L_q, L_k)
    if mask is not None:
        keep = keep & (np.broadcast_to(mask, (B, H, L_q, L_k)) != 0)
    s = np.where(keep, q @ np.swapaxes(k, -1, -2) / math.sqrt(d_k), -np.inf)     # (B, H, L_q, L_k)
    m = s.max(axis=-2, keepdims=True)                                 # per key, over the queries
    e = np.exp(s - np.where(np.isfinite(m), m, 0))
    z = e.sum(axis=-2, keepdims=True)
    return ((e / np.where(z > 0, z, 1)) @ v).astype(query.dtype)
