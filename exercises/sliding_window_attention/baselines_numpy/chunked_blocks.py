"""Baseline, NumPy track: sliding-window attention by query chunks (see the torch track's
``baselines/chunked_blocks.py``): chunks of ``window`` queries scored by one matmul against the keys
their windows reach, float16 accumulated in float32. It runs on the host only, beside the reference,
so that the tolerance covers this standard formulation too (see ``grader.judge.tolerance``).
"""

import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """(B, H, L_q, d_v) in query's dtype; see the exercise's spec for the contract."""
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k, d_v = key.shape[2], value.shape[-1]
    acc = np.float32 if query.dtype == np.float16 else query.dtype
    q = query.astype(acc) / math.sqrt(d_k)                                     # (B, H, L_q, d_k)
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
        rel = (np.arange(c, c + n) + offset)[:, None] - np.arange(lo, hi)[None, :]   # (n, hi - lo)
        ok = ((rel >= 0) & (rel < window)) if causal else (np.abs(rel) < window)
        if m is not None:
            ok = ok & (m[:, :, c:c + n, lo:hi] != 0)
        s = np.where(ok, q[:, :, c:c + n] @ np.swapaxes(k[:, :, lo:hi], -1, -2), -np.inf)
        mx = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isfinite(mx), mx, 0))
        z = e.sum(-1, keepdims=True)
        out[:, :, c:c + n] = (e @ v[:, :, lo:hi]) / np.where(z > 0, z, 1)
    return out.astype(query.dtype)
