"""Correct: one query at a time on arrays. Query i (absolute position p = i + L_k - L_q) slices keys
lo..hi of its window, cut at the ends of the sequence, reads the mask there from a broadcast view,
and takes a stable softmax over them; float16 is computed in float32.
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    acc = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = query.astype(acc), key.astype(acc), value.astype(acc)
    full = None if mask is None else np.broadcast_to(mask, (B, H, L_q, L_k))
    out = np.zeros((B, H, L_q, v.shape[-1]), dtype=acc)
    for i in range(L_q):
        p = i + L_k - L_q
        lo = max(p - window + 1, 0)
        hi = min(p + 1 if causal else p + window, L_k)
        if hi <= lo:
            continue
        s = np.einsum("bhd,bhkd->bhk", q[:, :, i], k[:, :, lo:hi]) / math.sqrt(d_k)
        if full is not None:
            s = np.where(full[:, :, i, lo:hi] != 0, s, -np.inf)
        top = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isinf(top), 0, top))
        z = e.sum(-1, keepdims=True)
        out[:, :, i] = np.einsum("bhk,bhkd->bhd", e / np.where(z == 0, 1, z), v[:, :, lo:hi])
    return out.astype(query.dtype)
