"""Correct: the RNN view. Causal runs a state (S, z) over the tokens: add token i, then read it;
not causal sums every token into the state first, then reads it once per query."""

import numpy as np


def feature_map(x):
    out = np.empty_like(x)
    pos = x > 0
    out[pos] = x[pos] + 1
    out[~pos] = np.exp(x[~pos])
    return out


def linear_attention(query, key, value, causal=False):
    if not (query.ndim == key.ndim == value.ndim == 4):
        raise ValueError("expected (B, H, L, d) inputs")
    B, H, L, d_k = query.shape
    if key.shape != (B, H, L, d_k) or value.shape[:3] != (B, H, L):
        raise ValueError(f"bad shapes {query.shape} {key.shape} {value.shape}")
    dt = np.float32 if query.dtype == np.float16 else query.dtype
    fq, fk = feature_map(query.astype(dt)), feature_map(key.astype(dt))
    v = value.astype(dt)
    d_v = v.shape[-1]
    S = np.zeros((B, H, d_k, d_v), dtype=dt)
    z = np.zeros((B, H, d_k), dtype=dt)
    out = np.zeros((B, H, L, d_v), dtype=dt)
    if not causal:
        for j in range(L):
            S += fk[:, :, j, :, None] * v[:, :, j, None, :]
            z += fk[:, :, j]
    for i in range(L):
        if causal:
            S += fk[:, :, i, :, None] * v[:, :, i, None, :]
            z += fk[:, :, i]
        qi = fq[:, :, i]                                     # (B, H, d_k)
        out[:, :, i] = (qi[..., None] * S).sum(axis=2) / (qi * z).sum(axis=-1, keepdims=True)
    return out.astype(query.dtype)
