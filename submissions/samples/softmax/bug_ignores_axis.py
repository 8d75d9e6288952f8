"""Wrong: always normalises over the last axis, whatever `axis` says.

Must fail: axes
Mistake: ignores_axis
"""
import numpy as np


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)
