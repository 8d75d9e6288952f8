"""Correct: exponentials in base 2 (np.exp2 of the shifted logits times log2(e)), reductions with
np.maximum.reduce / np.add.reduce, all -inf slices zeroed through errstate and np.where."""
import numpy as np

LOG2E = 1.4426950408889634


def softmax(x, axis=-1):
    x = np.asarray(x)
    top = np.maximum.reduce(x, axis=axis, keepdims=True)
    top = np.where(np.isneginf(top), 0, top).astype(x.dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp2((x - top) * x.dtype.type(LOG2E))
        s = np.add.reduce(e, axis=axis, keepdims=True)
        out = np.where(s > 0, e / s, 0)
    return out.astype(x.dtype)
