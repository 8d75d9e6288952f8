"""Hostile: returns zeros as an ndarray subclass whose __array_ufunc__, __array_function__, __eq__,
__array__ and comparison methods all claim a perfect match, and whose __reduce__ would create a
marker file on the host if anything there ever pickled or unpickled it.

expect: graded
passes: dtype_preserved,input_unchanged|dtype_preserved,input_unchanged,memory_scaling
host: no-unpickle
"""
import numpy as np


class Perfect(np.ndarray):
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return np.True_

    def __array_function__(self, func, types, args, kwargs):
        return True

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __array__(self, dtype=None, copy=None):
        return np.zeros(self.shape)

    def __reduce__(self):
        return (open, ("/tmp/attention-grader-unpickled-marker", "w"))

    def astype(self, *a, **k):
        return self


def softmax(x, axis=-1):
    return np.zeros_like(x).view(Perfect)
