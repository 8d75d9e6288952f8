"""Wrong: moves the axis last, computes, then reshapes back to x.shape instead of moving the axis back.

Must fail: axes, non_contiguous
Mistake: reshaped_instead_of_moved_back
"""
import numpy as np


def softmax(x, axis=-1):
    a = np.moveaxis(x, axis, -1)
    m = a.max(axis=-1, keepdims=True)
    m = np.where(np.isneginf(m), 0, m)
    e = np.exp(a - m)
    s = e.sum(axis=-1, keepdims=True)
    out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return out.reshape(x.shape)
