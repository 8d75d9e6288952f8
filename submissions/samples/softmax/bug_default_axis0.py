"""Wrong: the default axis is 0, not the last one.

Must fail: values_nd
Mistake: default_axis0
"""
import numpy as np


def softmax(x, axis=0):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
