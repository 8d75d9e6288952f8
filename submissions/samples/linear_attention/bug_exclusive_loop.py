"""Bug: the causal loop reads the running state before adding token i to it, so query i sees keys
j < i (and row 0 divides 0 by 0).

Must fail: causal
Mistake: state_read_before_update
"""

import numpy as np


def phi(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(query, key, value, causal=False):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("4-D please")
    if query.shape != key.shape or key.shape[:3] != value.shape[:3]:
        raise ValueError("shapes")
    dt = np.float32 if query.dtype == np.float16 else query.dtype
    fq, fk, v = phi(query.astype(dt)), phi(key.astype(dt)), value.astype(dt)
    if not causal:
        S = np.einsum("bhld,bhle->bhde", fk, v)
        z = fk.sum(axis=2)
        return (np.einsum("bhld,bhde->bhle", fq, S) / np.einsum("bhld,bhd->bhl", fq, z)[..., None]).astype(query.dtype)
    B, H, L, d = fq.shape
    S = np.zeros((B, H, d, v.shape[-1]), dtype=dt)
    z = np.zeros((B, H, d), dtype=dt)
    out = np.zeros((B, H, L, v.shape[-1]), dtype=dt)
    with np.errstate(invalid="ignore", divide="ignore"):
        for i in range(L):
            out[:, :, i] = np.einsum("bhd,bhde->bhe", fq[:, :, i], S) / np.einsum("bhd,bhd->bh", fq[:, :, i], z)[..., None]
            S = S + np.einsum("bhd,bhe->bhde", fk[:, :, i], v[:, :, i])
            z = z + fk[:, :, i]
    return out.astype(query.dtype)
