"""Bug: the denominator carries the epsilon of the paper's code (fast_transformers: 1 / (Q . K_sum + eps),
eps = 1e-6); the contract has none, and where every feature is far below zero the denominators are
around 1e-4, so the epsilon shrinks the rows by about 1%.

Must fail: large_magnitudes
Mistake: eps_in_denominator
"""

import numpy as np

EPS = 1e-6


def linear_attention(query, key, value, causal=False):
    if not (query.ndim == key.ndim == value.ndim == 4) or query.shape != key.shape or value.shape[:3] != key.shape[:3]:
        raise ValueError("bad shapes")
    dt = np.float32 if query.dtype == np.float16 else query.dtype
    Q = np.where(query > 0, query + 1, np.exp(np.minimum(query, 0))).astype(dt)
    K = np.where(key > 0, key + 1, np.exp(np.minimum(key, 0))).astype(dt)
    V = value.astype(dt)
    if causal:
        KV = np.cumsum(K[..., None] * V[..., None, :], axis=2)
        Z = 1 / (np.einsum("bhld,bhld->bhl", Q, np.cumsum(K, axis=2)) + EPS)
        out = np.einsum("bhld,bhlde,bhl->bhle", Q, KV, Z, optimize=True)
    else:
        KV = np.einsum("bhld,bhle->bhde", K, V)
        Z = 1 / (np.einsum("bhld,bhd->bhl", Q, K.sum(axis=2)) + EPS)
        out = np.einsum("bhld,bhde,bhl->bhle", Q, KV, Z, optimize=True)
    return out.astype(query.dtype)
