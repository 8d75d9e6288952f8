"""Correct (NumPy track): heads cut with np.split along the feature axis and np.stack-ed on a new
head axis, log-sum-exp softmax (np.logaddexp.reduce), heads merged with np.concatenate."""
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    D = query.shape[-1]
    if D % num_heads != 0:
        raise ValueError("num_heads must divide the model width")
    d_k = D // num_heads
    heads = lambda x: np.stack(np.split(x, num_heads, axis=-1), axis=1)       # (B, H, L, d_k)
    q, k, v = heads(query @ W_q), heads(key @ W_k), heads(value @ W_v)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(np.float64(d_k)).astype(query.dtype)
    if mask is not None:
        s = np.where(np.asarray(mask).astype(bool), s, -np.inf)
    lse = np.logaddexp.reduce(s, axis=-1, keepdims=True)
    dead = np.isneginf(lse)
    with np.errstate(invalid="ignore"):
        w = np.where(dead, 0, np.exp(s - np.where(dead, 0, lse)))
    out = w.astype(query.dtype) @ v                                             # (B, H, L_q, d_k)
    merged = np.concatenate(list(out.transpose(1, 0, 2, 3)), axis=-1)          # (B, L_q, D)
    return merged @ W_o
