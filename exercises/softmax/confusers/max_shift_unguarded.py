"""Confuser: the textbook stable softmax with no guard for a slice that is entirely -inf. Its
maximum is -inf, so x - max is -inf - (-inf) = NaN before any division: the NaN comes from the
shift, not from 0/0 (the exponentials are NaN, not 0).

Must not name: "gave NaN (0/0)"
May name: nan_all_neg_inf, "entirely -inf gave NaN"
"""
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    with np.errstate(invalid="ignore"):
        e = np.exp(x - np.max(x, axis=axis, keepdims=True))
        return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)
