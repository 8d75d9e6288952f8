"""Confuser: the scale is cast to np.float32 to keep float32 inputs in float32 (np.float32(sqrt(d_k))),
so float64 inputs are divided by a float32-rounded sqrt(d_k): everything else is float64. The error
is the scale constant's rounding, not float32 internals.

Its values are float64 numbers, not float32 ones, so float32_internals (whose replay now also needs
every value of the output to be exactly a float32 number: a computation cast back from float32) is
not named; a hint calling the computation float32 is not either.

Must not name: float32_internals, "computed in float32 internally (cast down"
"""
import math
import numpy as np


def compute_attention_scores(query, key, mask=None):
    scale = np.float32(math.sqrt(query.shape[-1]))        # wrong for float64: rounded to float32
    scores = np.matmul(query, np.swapaxes(key, -1, -2)) / scale
    if mask is not None:
        allowed = np.broadcast_to(np.asarray(mask) != 0, scores.shape)
        scores = np.where(allowed, scores, -np.inf)
    m = scores.max(axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(scores - m)
    s = e.sum(axis=-1, keepdims=True)
    w = np.where(s > 0, e / np.where(s > 0, s, 1.0), 0.0)
    return w.astype(query.dtype)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return np.matmul(w, value).astype(query.dtype), w
