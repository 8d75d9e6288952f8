"""Wrong: exponentiates raw scores, which overflow for large logits.

Must fail: large_logits
Mistake: no_max_subtraction_mask_after_exp
"""
import math

import numpy as np


def compute_attention_scores(query, key, mask=None):
    s = query @ np.swapaxes(key, -1, -2) / math.sqrt(query.shape[-1])
    e = np.exp(s)
    if mask is not None:
        e = e * (np.asarray(mask) != 0)
    t = e.sum(-1, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
