"""Correct: query pre-scaled by 1/sqrt(d_k), boolean-index fill with -inf, in-place exp and division on its own score buffer (ufunc out=)."""
import numpy as np
def compute_attention_scores(query, key, mask=None):
    q = query * (1.0 / np.sqrt(query.shape[-1])).astype(query.dtype)
    s = q @ np.swapaxes(key, -2, -1)
    if mask is not None:
        m = np.broadcast_to(mask, s.shape) if np.ndim(mask) <= s.ndim else mask
        s = s.copy() if s.shape == np.broadcast_shapes(s.shape, np.shape(mask)) else np.broadcast_to(s, np.broadcast_shapes(s.shape, np.shape(mask))).copy()
        s[~np.broadcast_to(np.asarray(mask, dtype=bool), s.shape)] = -np.inf
    mx = s.max(axis=-1, keepdims=True)
    mx[np.isneginf(mx)] = 0
    s -= mx
    np.exp(s, out=s)
    z = s.sum(axis=-1, keepdims=True)
    z[z == 0] = np.inf
    s /= z
    return s
def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
