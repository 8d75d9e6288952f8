"""Wrong: subtracts the max in place, changing the caller's array.

Must fail: input_unchanged
Mistake: inplace
"""
import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0
    x -= m
    np.exp(x, out=x)
    s = x.sum(axis=axis, keepdims=True)
    return np.divide(x, s, out=np.zeros_like(x), where=s > 0)
