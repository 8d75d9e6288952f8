"""Wrong: the band is found as an (L_q, L_k) bool matrix of index comparisons (np.arange broadcasts,
combined with the mask), then np.nonzero gives each query's keys: an L_q x L_k matrix on every path. One
byte per element passed on peak bytes (full marks); np.arange now hands out counting arrays in a step
measuring the largest array, whose size grows like L^2. From a helper hunt.

Must fail: memory_scaling
"""
import math
import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError("window must be an integer >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = np.dtype(np.float32) if query.dtype == np.float16 else query.dtype
    q = query.astype(work) * work.type(1.0 / math.sqrt(d_k))
    k, v = key.astype(work), value.astype(work)
    W = window if causal else 2 * window - 1
    i = np.arange(L_q)[:, None] + (L_k - L_q)          # absolute query positions
    j = np.arange(L_k)[None, :]
    band = (j <= i) & (j > i - window) if causal else ((j > i - window) & (j < i + window))   # (L_q, L_k) bool
    rows, cols = np.nonzero(band)                       # the band's (query, key) pairs, row-major
    # place them in (L_q, W) slots: slot = key - (first key of the row's window)
    lo = (i[:, 0] - window + 1)
    slot = cols - lo[rows]
    idx = np.zeros((L_q, W), dtype=np.int64)
    keep = np.zeros((L_q, W), dtype=bool)
    idx[rows, slot] = cols
    keep[rows, slot] = True
    if mask is not None:
        mb = np.broadcast_to(mask, (B, H, L_q, L_k))
        keep = keep & (mb[:, :, np.arange(L_q)[:, None], idx] != 0)
    kb, vb = k[:, :, idx], v[:, :, idx]
    s = np.einsum("bhqd,bhqwd->bhqw", q, kb)
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    p = np.exp(s - m)
    l = p.sum(axis=-1, keepdims=True)
    att = p / np.where(l > 0, l, 1)
    return np.einsum("bhqw,bhqwd->bhqd", att, vb).astype(query.dtype)
