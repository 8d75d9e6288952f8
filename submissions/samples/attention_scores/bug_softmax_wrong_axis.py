"""Wrong: normalises over the query axis (-2) instead of the key axis.

Must fail: weights_basic
Mistake: softmax_over_query_axis
"""
import math

import numpy as np


def compute_attention_scores(query, key, mask=None):
    s = query @ np.swapaxes(key, -1, -2) / math.sqrt(query.shape[-1])
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -1e30)
    e = np.exp(s - s.max(-2, keepdims=True))
    return e / e.sum(-2, keepdims=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
