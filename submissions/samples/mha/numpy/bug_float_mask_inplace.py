"""Wrong (NumPy track): turns the caller's 0/1 float mask into an additive bias in place
(mask[...] = where(mask != 0, 0, -inf)); the output is right, but the caller's mask is destroyed.
Bool masks are left alone, so only a numeric-mask case can see it.

Mistake: float_mask_rewritten_in_place
Must fail: inputs_unchanged
"""
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, Lq, D = query.shape
    Lk = key.shape[1]
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    H = num_heads
    dk = D // H
    q = (query @ W_q).reshape(B, Lq, H, dk).swapaxes(1, 2)
    k = (key @ W_k).reshape(B, Lk, H, dk).swapaxes(1, 2)
    v = (value @ W_v).reshape(B, Lk, H, dk).swapaxes(1, 2)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(dk)
    if mask is not None:
        keep = np.asarray(mask) != 0
        if np.asarray(mask).dtype.kind == "f":
            mask[...] = np.where(keep, 0.0, -np.inf)
        s = np.where(keep, s, -np.inf)
    m = s.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(s - m)
    z = e.sum(-1, keepdims=True)
    p = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    return ((p @ v).swapaxes(1, 2).reshape(B, Lq, D) @ W_o).astype(query.dtype)
