"""Wrong: NaNs of all -inf slices replaced by uniform weights 1/n instead of zeros.

Must fail: all_neg_inf
Mistake: uniform_all_neg_inf
"""
import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - m)
        out = e / e.sum(axis=axis, keepdims=True)
    n = x.shape[axis]
    return np.where(np.isnan(out), 1.0 / n, out).astype(x.dtype)
