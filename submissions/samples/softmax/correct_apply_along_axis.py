"""Correct: a 1-D softmax applied to every slice with np.apply_along_axis."""
import numpy as np


def _one(v):
    top = v.max()
    if top == -np.inf:
        return np.zeros_like(v)
    e = np.exp(v - top)
    return e / e.sum()


def softmax(x, axis=-1):
    return np.apply_along_axis(_one, axis, x)
