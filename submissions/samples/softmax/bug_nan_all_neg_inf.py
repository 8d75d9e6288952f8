"""Wrong: stable, but an all -inf slice gives -inf - (-inf) = NaN instead of zeros.

Must fail: all_neg_inf
Mistake: nan_all_neg_inf
"""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
