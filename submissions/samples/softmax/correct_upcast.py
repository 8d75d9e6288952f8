"""Correct: compute in float64 whatever the input, then cast back to the input dtype."""
import numpy as np


def softmax(x, axis=-1):
    z = np.asarray(x, dtype=np.float64)
    shift = z.max(axis=axis, keepdims=True)
    shift[~np.isfinite(shift)] = 0.0
    e = np.exp(z - shift)
    total = e.sum(axis=axis, keepdims=True)
    total[total == 0] = 1.0
    return (e / total).astype(x.dtype)
