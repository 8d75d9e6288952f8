"""Correct: online softmax over chunks of the axis (running max and running sum, as in FlashAttention), np.take for the chunks."""
import numpy as np
CHUNK = 3
def softmax(x, axis=-1):
    x = np.asarray(x)
    ax = axis % x.ndim
    n = x.shape[ax]
    m = np.full(x.shape[:ax] + (1,) + x.shape[ax + 1:], -np.inf, dtype=x.dtype)
    s = np.zeros_like(m)
    for start in range(0, n, CHUNK):
        blk = np.take(x, np.arange(start, min(n, start + CHUNK)), axis=ax)
        new_m = np.maximum(m, blk.max(axis=ax, keepdims=True))
        safe = np.where(np.isneginf(new_m), 0, new_m)
        s = s * np.exp(np.where(np.isneginf(m), -np.inf, m - safe)) + np.exp(blk - safe).sum(axis=ax, keepdims=True)
        m = new_m
    safe = np.where(np.isneginf(m), 0, m)
    e = np.exp(x - safe)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(s > 0, e / np.where(s > 0, s, 1), 0)
    return out.astype(x.dtype, copy=False)
