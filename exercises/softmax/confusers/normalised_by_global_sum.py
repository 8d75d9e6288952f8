"""Confuser: the exponentials (max-shifted per slice) are divided by the sum over the whole array
instead of along the axis, so no slice sums to 1: the symptom "does not sum to 1" without a missing
division (the division is there, over the wrong extent).

Must not name: no_normalisation, "not divided by their sum"
"""
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    e = np.exp(x - m)
    s = e.sum()
    return (e / s if s > 0 else np.zeros_like(e)).astype(x.dtype, copy=False)
