"""Hostile: returns the right answer plus 5j: a cast to float would drop the imaginary part and
let it pass.

expect: graded
passes: input_unchanged|input_unchanged,memory_scaling
"""
import numpy as np


def softmax(x, axis=-1):
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0) + 5j
