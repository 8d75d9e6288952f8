"""Correct: the band as a strided view. Keys and values are padded (window - 1 slots at the front,
plus L_q - L_k when there are more queries than keys; window - 1 at the back when not causal) and
numpy.lib.stride_tricks.sliding_window_view gives every window of W keys without a copy; query i
takes the window starting at padded slot i + max(L_k - L_q, 0).
"""

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError("window must be an int >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = np.dtype(np.float32) if query.dtype == np.float16 else query.dtype
    offset = L_k - L_q
    W = window if causal else 2 * window - 1
    front = window - 1 + max(-offset, 0)
    back = 0 if causal else window - 1
    start = max(offset, 0)
    pad = ((0, 0), (0, 0), (front, back), (0, 0))
    kp = np.pad(key.astype(work), pad)
    vp = np.pad(value.astype(work), pad)
    kw = sliding_window_view(kp, W, axis=2)[:, :, start:start + L_q]      # (B, H, L_q, d_k, W) view
    vw = sliding_window_view(vp, W, axis=2)[:, :, start:start + L_q]      # (B, H, L_q, d_v, W) view
    s = np.einsum("bhqd,bhqdw->bhqw", query.astype(work), kw) / work.type(math.sqrt(d_k))
    j = np.arange(L_q)[:, None] + offset - window + 1 + np.arange(W)
    valid = (j >= 0) & (j < L_k)
    if mask is not None:
        valid = valid & (np.broadcast_to(mask, (B, H, L_q, L_k))[:, :, np.arange(L_q)[:, None], np.clip(j, 0, L_k - 1)] != 0)
    s = np.where(valid, s, -np.inf)
    top = s.max(-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(top), top, 0))
    z = e.sum(-1, keepdims=True)
    return np.einsum("bhqw,bhqdw->bhqd", e / np.maximum(z, np.finfo(work).tiny), vw).astype(query.dtype)
