"""Hostile: returns arrays of strings, bytes, dates, a structured dtype and void, in turn: arrays
the host must refuse to compare (graded as wrong, not a crash).

expect: graded
passes: input_unchanged|input_unchanged,memory_scaling
"""
import numpy as np

calls = 0


def softmax(x, axis=-1):
    global calls
    calls += 1
    kinds = [x.astype(str), x.astype(bytes), np.zeros(x.shape, dtype="datetime64[s]"),
             np.zeros(x.shape, dtype=[("a", "f8"), ("b", "i4")]), np.zeros(x.shape, dtype="V8")]
    return kinds[calls % len(kinds)]
