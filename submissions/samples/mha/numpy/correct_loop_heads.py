"""Correct (NumPy track): one head at a time over column slices, in float64, cast back."""

import math

import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    D = query.shape[-1]
    if D % num_heads != 0:
        raise ValueError(f"{D} % {num_heads} != 0")
    d_k = D // num_heads
    f = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    Q, K, V = f(query) @ f(W_q), f(key) @ f(W_k), f(value) @ f(W_v)
    keep = None if mask is None else np.asarray(mask) != 0
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        s = Q[..., cols] @ np.swapaxes(K[..., cols], -1, -2) / math.sqrt(d_k)  # (B, L_q, L_k)
        if keep is not None:
            kh = np.broadcast_to(keep, (s.shape[0], num_heads, *s.shape[-2:]))[:, h]  # (B, L_q, L_k)
            s = np.where(kh, s, -np.inf)
        m = np.max(s, axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        e = np.exp(s - m)
        tot = e.sum(-1, keepdims=True)
        heads.append(np.where(tot > 0, e / np.where(tot > 0, tot, 1.0), 0.0) @ V[..., cols])
    return (np.concatenate(heads, axis=-1) @ f(W_o)).astype(query.dtype)
