"""Confuser: a hand-written softmax divides by sum + 1e-7: an error of float32's size on float64 inputs,
float64 throughout. float32_internals replayed it within its REPLAY_ERROR_RATIO; its replay now also
needs every value of the output to be a float32 number, which these are not. From a confuser hunt.

Must not name: float32_internals, "float32"
"""

import math

import numpy as np


def _softmax_last(s: np.ndarray) -> np.ndarray:
    """Stable softmax over the last axis; an all -inf row gives zeros."""
    m = np.max(s, axis=-1, keepdims=True)                          # (..., L_q, 1)
    m = np.where(np.isfinite(m), m, 0).astype(s.dtype)
    e = np.exp(s - m)                                              # (..., L_q, L_k)
    t = np.sum(e, axis=-1, keepdims=True)                          # (..., L_q, 1)
    return e / (t + 1e-7)


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head attention of ``query`` over ``key``/``value``.

    Args:
        query: (B, L_q, D) float32/float64 array.
        key, value: (B, L_k, D) arrays.
        num_heads: number of heads H; must divide D.
        W_q, W_k, W_v, W_o: (D, D) projection weights (``x @ W``).
        mask: None, or a bool/numeric array broadcastable to (B, H, L_q, L_k); nonzero = may attend.

    Returns:
        (B, L_q, D) array in the inputs' dtype.

    Raises:
        ValueError: ``D % num_heads != 0``.
    """
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads
    q = (query @ W_q).reshape(B, L_q, H, d_k).transpose(0, 2, 1, 3)   # (B, H, L_q, d_k)
    k = (key @ W_k).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)     # (B, H, L_k, d_k)
    v = (value @ W_v).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)   # (B, H, L_k, d_k)
    att = q @ k.transpose(0, 1, 3, 2) / np.asarray(math.sqrt(d_k), dtype=query.dtype)  # (B, H, L_q, L_k)
    if mask is not None:
        att = np.where(np.asarray(mask) != 0, att, -np.inf)           # (B, H, L_q, L_k)
    att = _softmax_last(att)                                          # (B, H, L_q, L_k)
    y = att @ v                                                       # (B, H, L_q, d_k)
    y = y.transpose(0, 2, 1, 3).reshape(B, L_q, D)                    # (B, L_q, D) heads side by side
    return (y @ W_o).astype(query.dtype, copy=False)                  # (B, L_q, D)
