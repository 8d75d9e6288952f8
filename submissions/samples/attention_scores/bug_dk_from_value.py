"""Wrong: scales by sqrt of the value width d_v instead of d_k (only visible when d_v != d_k).

Must fail: cross_lengths
Mistake: scaled_by_value_width
"""
import math

import numpy as np


def _attend(query, key, value, mask):
    s = query @ np.swapaxes(key, -1, -2) / math.sqrt(value.shape[-1])
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def compute_attention_scores(query, key, mask=None):
    return _attend(query, key, key, mask)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = _attend(query, key, value, mask)
    return w @ value, w
