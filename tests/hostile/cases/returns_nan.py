"""Hostile: returns NaN everywhere (NaN compares unequal to everything, so naive checks that test
"not greater than the tolerance" would pass it).

expect: graded
passes: dtype_preserved,input_unchanged|dtype_preserved,input_unchanged,memory_scaling
"""
import numpy as np


def softmax(x, axis=-1):
    return np.full_like(x, np.nan)
