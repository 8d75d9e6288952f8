"""Wrong (complexity only): for every query row it recomputes the whole score matrix and keeps one row,
so the work grows like seq_len^3 instead of seq_len^2.

Must fail: work_scaling
Mistake: per_row_recompute
"""
import math

import numpy as np


def _row_weights(query, key, mask, i):
    scores = query @ np.swapaxes(key, -1, -2) / math.sqrt(query.shape[-1])   # all rows, every time
    if mask is not None:
        scores = np.where(np.broadcast_to(np.asarray(mask) != 0, scores.shape), scores, -np.inf)
    row = scores[..., i, :]
    m = row.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(row - m)
    t = e.sum(-1, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def compute_attention_scores(query, key, mask=None):
    rows = [_row_weights(query, key, mask, i) for i in range(query.shape[-2])]
    return np.stack(rows, axis=-2)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
