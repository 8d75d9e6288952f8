"""Correct: chunks of `window` queries, each scored against the at most 2 * window - 1 (causal) or
3 * window - 2 keys its band can reach, with the band condition and the mask applied to the tile.
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k, d_v = key.shape[2], value.shape[-1]
    acc = np.float32 if query.dtype == np.float16 else query.dtype
    q = query.astype(acc) / math.sqrt(d_k)                               # a Python float keeps acc
    k, v = key.astype(acc), value.astype(acc)
    offset = L_k - L_q
    m = None if mask is None else np.broadcast_to(mask, (B, H, L_q, L_k))
    out = np.zeros((B, H, L_q, d_v), dtype=acc)
    for c in range(0, L_q, window):
        n = min(window, L_q - c)
        lo = max(c + offset - window + 1, 0)
        hi = min(c + n + offset if causal else c + n + offset + window - 1, L_k)
        if hi <= lo:
            continue
        rel = (np.arange(c, c + n) + offset)[:, None] - np.arange(lo, hi)[None, :]
        ok = ((rel >= 0) & (rel < window)) if causal else (np.abs(rel) < window)
        if m is not None:
            ok = ok & (m[:, :, c:c + n, lo:hi] != 0)
        s = np.where(ok, q[:, :, c:c + n] @ np.swapaxes(k[:, :, lo:hi], -1, -2), -np.inf)
        mx = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isneginf(mx), 0, mx))
        z = e.sum(-1, keepdims=True)
        out[:, :, c:c + n] = (e @ v[:, :, lo:hi]) / np.where(z > 0, z, 1)
    return out.astype(query.dtype)
