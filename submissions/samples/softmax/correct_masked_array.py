"""Correct: -inf entries hidden in a numpy.ma masked array; the masked max/sum skip them and the
filled result gives exactly 0 there (and zeros for all -inf slices)."""
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    mx = np.ma.masked_equal(x, -np.inf, copy=True)
    top = mx.max(axis=axis, keepdims=True)
    e = np.ma.exp(mx - top)
    out = e / e.sum(axis=axis, keepdims=True)
    return np.ma.filled(out, 0).astype(x.dtype)
