"""Wrong: exponentiates without subtracting the max, so large logits overflow to inf/NaN.

Must fail: large_logits
Mistake: no_max_subtraction
"""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
