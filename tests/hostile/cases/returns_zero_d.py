"""Hostile: returns 0-d arrays and NumPy scalars (1/n, which broadcast against any answer).

expect: graded
passes: dtype_preserved,input_unchanged|dtype_preserved,input_unchanged,memory_scaling
"""
import numpy as np

calls = 0


def softmax(x, axis=-1):
    global calls
    calls += 1
    value = 1.0 / x.shape[axis]
    return np.array(value, dtype=x.dtype) if calls % 2 else x.dtype.type(value)
