"""Confuser: scores, window mask, softmax and weighted sum all run in float64 for float64 input, but the
result passes through float32 at the end (`y.astype(np.float32).astype(query.dtype)`). The float64
answer is rounded to float32 once, at the end: every value is a float32 number, but the computation
never ran in float32.

Must not name: float32_internals, "computation ran in float32"
"""
import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """Softmax attention restricted to a sliding window of keys.

    Args:
        query: (B, H, L_q, d_k) array. key: (B, H, L_k, d_k). value: (B, H, L_k, d_v).
        window: an int >= 1 (see the torch reference for the band).
        causal: bool.
        mask: None, or a bool/numeric array broadcastable to (B, H, L_q, L_k); nonzero = may attend.

    Returns:
        (B, H, L_q, d_v) array in ``query``'s dtype; rows that see no key are 0.

    Raises:
        ValueError: ``window`` is not an integer >= 1.
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = np.dtype(np.float32) if query.dtype == np.float16 else query.dtype
    q = query.astype(work) * work.type(1.0 / math.sqrt(d_k))   # (B, H, L_q, d_k)
    k, v = key.astype(work), value.astype(work)                 # (B, H, L_k, d_k), (B, H, L_k, d_v)
    W = window if causal else 2 * window - 1                    # keys in one query's band
    pos = np.arange(L_q) + (L_k - L_q)                          # (L_q,) absolute position of each query
    idx = (pos - window + 1)[:, None] + np.arange(W)            # (L_q, W) the band's key indices
    keep = (idx >= 0) & (idx < L_k)                             # (L_q, W) inside the key sequence
    idx = np.clip(idx, 0, max(L_k - 1, 0))
    if mask is not None:
        band = np.broadcast_to(mask, (B, H, L_q, L_k))          # a view, nothing copied
        keep = keep & (band[:, :, np.arange(L_q)[:, None], idx] != 0)  # (B, H, L_q, W)
    kb, vb = k[:, :, idx], v[:, :, idx]                         # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)
    s = np.einsum("bhqd,bhqwd->bhqw", q, kb)                    # (B, H, L_q, W) scores of the band
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)                           # (B, H, L_q, 1)
    m = np.where(np.isfinite(m), m, 0)                          # rows that see no key
    p = np.exp(s - m)                                           # (B, H, L_q, W); masked -> 0
    l = p.sum(axis=-1, keepdims=True)                           # (B, H, L_q, 1)
    att = p / np.where(l > 0, l, 1)                             # rows that see no key stay 0
    y = np.einsum("bhqw,bhqwd->bhqd", att, vb)                  # (B, H, L_q, d_v)
    return y.astype(np.float32).astype(query.dtype)
