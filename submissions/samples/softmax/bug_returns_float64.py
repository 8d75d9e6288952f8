"""Wrong: returns float64 for float32 input (the dtype must be kept).

Must fail: dtype_preserved
Mistake: returns_float64
"""
import numpy as np


def softmax(x, axis=-1):
    z = np.asarray(x, dtype=np.float64)
    m = z.max(axis=axis, keepdims=True)
    m[~np.isfinite(m)] = 0
    e = np.exp(z - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
