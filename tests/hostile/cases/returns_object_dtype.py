"""Hostile: returns an object-dtype array of objects that equal everything.

expect: graded
passes: input_unchanged|input_unchanged,memory_scaling
"""
import numpy as np


class Yes(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def softmax(x, axis=-1):
    out = np.empty(x.shape, dtype=object)
    out.fill(Yes(0.5))
    return out
