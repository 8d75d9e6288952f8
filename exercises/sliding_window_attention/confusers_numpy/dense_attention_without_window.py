"""Confuser: plain softmax attention over every key with the causal limit and the padding mask, the
window never applied: the L_q x L_k cost of dense attention (q @ k^T, the softmax and the weights @ V
over every key), and wrong values wherever a query sees more than `window` keys. The bank's
dense_band_attention costs the same but has the right values, so its cost replay must not name it.

Must not name: dense_band_attention, full_scores
"""
import math

import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    L_q, L_k = query.shape[2], key.shape[2]
    work = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = query.astype(work), key.astype(work), value.astype(work)
    keep = np.ones((L_q, L_k), dtype=bool)
    if causal:
        keep = np.tril(keep, L_k - L_q)
    if mask is not None:
        keep = keep & (mask != 0)
    s = np.where(keep, q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1]), -np.inf)
    m = s.max(axis=-1, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(m), m, 0))
    l = p.sum(axis=-1, keepdims=True)
    return ((p / np.where(l > 0, l, 1)) @ v).astype(query.dtype)
