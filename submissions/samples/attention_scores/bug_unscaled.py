"""Wrong: forgets to divide the scores by sqrt(d_k).

Must fail: scaling
Mistake: unscaled
"""
import numpy as np


def compute_attention_scores(query, key, mask=None):
    s = query @ np.swapaxes(key, -1, -2)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
