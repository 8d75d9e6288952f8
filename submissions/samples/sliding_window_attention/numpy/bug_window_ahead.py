"""Bug: the causal window read forward from the query: keys p .. p + window - 1, the next window
tokens instead of the last ones (the window counted from the wrong end).

Must fail: values, ragged_ends
Mistake: window_forward
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
    out = np.zeros((B, H, L_q, v.shape[-1]), dtype=work)
    full = None if mask is None else np.broadcast_to(mask, (B, H, L_q, L_k))
    for i in range(L_q):
        p = i + L_k - L_q
        lo, hi = (p, min(p + window, L_k)) if causal else (max(p - window + 1, 0), min(p + window, L_k))
        if hi <= lo:
            continue
        s = np.einsum("bhd,bhkd->bhk", q[:, :, i], k[:, :, lo:hi]) / math.sqrt(d_k)
        if full is not None:
            s = np.where(full[:, :, i, lo:hi] != 0, s, -np.inf)
        mx = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isinf(mx), 0, mx))
        z = e.sum(-1, keepdims=True)
        out[:, :, i] = np.einsum("bhk,bhkd->bhd", e / np.where(z > 0, z, 1), v[:, :, lo:hi])
    return out.astype(query.dtype)
