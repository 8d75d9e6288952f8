"""Reference solution: numerically stable softmax (NumPy).

Subtracting the maximum along the axis before exponentiating leaves the result unchanged
(softmax is shift-invariant) and keeps every exponent <= 0, so nothing overflows; see Goodfellow,
Bengio and Courville, *Deep Learning*, section 4.1. Entries equal to ``-inf`` get probability 0;
a slice that is entirely ``-inf`` has no finite maximum and is defined here as all zeros.
"""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax of ``x`` along ``axis``.

    Args:
        x: floating array of any shape (float32 or float64).
        axis: the axis to normalise over; negative values count from the end.

    Returns:
        Array of the same shape and dtype as ``x``, non-negative, summing to 1 along ``axis``
        (all zeros for a slice whose entries are all ``-inf``).
    """
    x = np.asarray(x)
    m = np.max(x, axis=axis, keepdims=True)                 # (..., 1, ...) largest logit per slice
    m = np.where(np.isfinite(m), m, 0).astype(x.dtype)      # an all -inf slice: shift by 0
    with np.errstate(over="ignore"):                        # -big - big -> -inf is fine: exp gives 0
        e = np.exp(x - m)                                   # same shape as x, every value in [0, 1]
    s = np.sum(e, axis=axis, keepdims=True)                 # (..., 1, ...) normaliser
    out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)  # all -inf slice -> zeros, not 0/0
    return out.astype(x.dtype, copy=False)
