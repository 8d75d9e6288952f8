"""Confuser: a stable softmax (the maximum is subtracted) that computes a float64 input in float32
and casts the result back to float64; logits beyond float32's range become inf there and the result
NaN, which looks like exp overflowing without a max shift, but the max shift is there.

Must not name: no_max_subtraction, "exp overflowed", "subtract the maximum"
May name: computed_in_float32
"""
import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    with np.errstate(over="ignore", invalid="ignore"):
        work = x.astype(np.float32)
        m = np.max(work, axis=axis, keepdims=True)
        m = np.where(np.isfinite(m), m, np.float32(0))
        e = np.exp(work - m)
        s = e.sum(axis=axis, keepdims=True)
        out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return out.astype(x.dtype)
