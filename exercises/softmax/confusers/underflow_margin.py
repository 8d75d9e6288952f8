"""Confuser: the exponent is shifted by the maximum plus a "safety margin" of 800, so every exp
underflows to 0 in float64 (0 in float32 already below -104) and the result is 0/0 = NaN: NaN from an
underflow, on small logits as on large ones, not from exp overflowing.

Must not name: no_max_subtraction, "exp overflowed", "subtract the maximum"
"""
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(x - m - x.dtype.type(800))
        return (e / e.sum(axis=axis, keepdims=True)).astype(x.dtype, copy=False)
