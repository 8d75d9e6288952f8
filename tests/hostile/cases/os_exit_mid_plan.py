"""Hostile: answers correctly until it sees a 4-D input, then os._exit(0): the checks that finished
before still count, the rest are errors.

expect: crashed
passes: values_1d
"""
import os

import numpy as np


def softmax(x, axis=-1):
    if x.ndim == 4:
        os._exit(0)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0)
