"""Confuser: the axis argument is ignored for 3-D inputs only (a shape special case written from one
example): 2-D and 1-D calls normalise over the axis asked for, 3-D calls over the last axis. It is
not a softmax that ignores its axis "always": the bank's ignores_axis reproduces its 3-D cases but is
wrong on the 2-D axis=0 cases it gets right.

Must not name: ignores_axis, "the axis argument is ignored"
May name: "normalised over axis"
"""
import numpy as np


def softmax(x, axis=-1):
    x = np.asarray(x)
    if x.ndim == 3:
        axis = -1  # wrong: the axis is ignored for 3-D inputs only
    m = np.max(x, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)
    with np.errstate(over="ignore"):
        e = np.exp(x - m)
    s = e.sum(axis=axis, keepdims=True)
    return np.divide(e, s, out=np.zeros_like(e), where=s > 0).astype(x.dtype, copy=False)
