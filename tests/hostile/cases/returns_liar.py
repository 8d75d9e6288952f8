"""Hostile: returns an object that claims to equal everything (__eq__, __array__ of the input's
shape, shape/dtype attributes, __len__, __float__) instead of an array.

expect: graded
passes: input_unchanged|input_unchanged,memory_scaling
"""
import numpy as np


class Liar:
    def __init__(self, x):
        self.shape, self.dtype, self.ndim = x.shape, x.dtype, x.ndim

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__

    def __array__(self, dtype=None, copy=None):
        return np.full(self.shape, np.nan)

    def __len__(self):
        return self.shape[0] if self.shape else 0

    def __float__(self):
        return 1.0

    def __getattr__(self, name):
        return lambda *a, **k: True


def softmax(x, axis=-1):
    return Liar(x)
