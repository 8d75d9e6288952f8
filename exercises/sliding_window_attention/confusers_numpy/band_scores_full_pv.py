"""Confuser: the scores are computed on the band only (keys gathered per query, (L_q, W)), but the
softmax weights are then scattered back into a full (L_q, L_k) matrix (np.add.at) and multiplied by
all values: the L_q x L_k work and memory are in the weights @ values product, not in q @ k^T.

The cost replay may name full_scores: its sentence now leads with what the replay proves ("your measured cost equals, at the larger sizes, that of this mistake (a different structure of the same size costs the same)"), which is true of this file; a hand-written hint stating the mechanism as fact is not.

Must not name: "q @ k^T over all L_k keys is computed", full_scores_when_masked, full_scores_when_not_causal, cross_lengths_full_scores
May name: full_scores
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
    kb = k[:, :, idx]                                           # (B, H, L_q, W, d_k)
    s = np.einsum("bhqd,bhqwd->bhqw", q, kb)                    # (B, H, L_q, W) scores of the band
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)                           # (B, H, L_q, 1)
    m = np.where(np.isfinite(m), m, 0)                          # rows that see no key
    p = np.exp(s - m)                                           # (B, H, L_q, W); masked -> 0
    l = p.sum(axis=-1, keepdims=True)                           # (B, H, L_q, 1)
    att = p / np.where(l > 0, l, 1)                             # rows that see no key stay 0
    # spread the band's weights back to their key positions, then one matmul with all values
    full = np.zeros(att.shape[:3] + (L_k,), dtype=att.dtype)    # (B, H, L_q, L_k)
    rows = np.broadcast_to(np.arange(L_q)[:, None], idx.shape)
    np.add.at(full, (slice(None), slice(None), rows, idx), att)  # zeros outside the band
    y = full @ v                                                # (B, H, L_q, d_v)
    return y.astype(query.dtype)
