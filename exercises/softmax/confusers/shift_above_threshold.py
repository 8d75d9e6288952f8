"""Confuser: the max IS subtracted, but only when some |logit| exceeds 3e38 (float32 max, a threshold meant for
float64's exp range); float32 logits between ~88 and 700 are not shifted and overflow.

The overflow hint's evidence is the unshifted softmax reproducing the output; its sentence now says
just that and asks for the shift on every path (this file shifts on another path).

Must not name: no_max_subtraction, "exp overflowed: subtract the maximum along the axis before exponentiating"
May name: "exp overflowed: the output is the softmax computed without subtracting the maximum"
"""
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    finite = x[np.isfinite(x)]
    if finite.size and np.abs(finite).max() > 3e38:
        m = np.max(x, axis=axis, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        z = x - m
    else:
        z = x
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        e = np.exp(z)
        s = e.sum(axis=axis, keepdims=True)
        out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)
    return out.astype(x.dtype, copy=False)
