"""Wrong: logits clipped to [-80, 80] to 'avoid overflow' instead of subtracting the max.

Must fail: large_logits, dtype_max, all_neg_inf
Mistake: logits_clipped
"""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(np.clip(x, -80, 80))
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
