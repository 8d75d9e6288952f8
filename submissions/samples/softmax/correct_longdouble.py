"""Correct: everything in np.longdouble (extended precision) then cast back to the input dtype."""
import numpy as np


def softmax(x, axis=-1):
    z = np.array(x, dtype=np.longdouble)
    top = np.amax(z, axis=axis, keepdims=True)
    top[np.isneginf(top)] = 0
    np.subtract(z, top, out=z)
    np.exp(z, out=z)
    den = z.sum(axis=axis, keepdims=True)
    den[den == 0] = 1
    z /= den
    return z.astype(np.asarray(x).dtype)
