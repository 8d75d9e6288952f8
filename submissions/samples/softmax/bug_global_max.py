"""Wrong: subtracts the global max instead of each slice's max; slices far below it underflow to 0/0.

Must fail: large_logits
Mistake: global_max
"""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / e.sum(axis=axis, keepdims=True)
