"""Wrong: calls SciPy's softmax, which the exercise forbids.

Must fail: values_1d
Mistake: forbidden_api
"""
from scipy.special import softmax as _softmax


def softmax(x, axis=-1):
    return _softmax(x, axis=axis)
