"""Wrong: -inf masking without a guard, so a fully masked query row becomes NaN.

Must fail: fully_masked_rows
Mistake: nan_fully_masked_rows
"""
import math

import numpy as np


def compute_attention_scores(query, key, mask=None):
    s = query @ np.swapaxes(key, -1, -2) / math.sqrt(query.shape[-1])
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
