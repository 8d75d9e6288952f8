"""Correct: chunked causal linear attention (as in the chunkwise form of linear transformers): within
a chunk of C tokens the C x C lower triangle of phi(Q) phi(K)^T, across chunks a running state
(S, z). Work O(L * C * d + L * d^2), memory O(C^2 + C * d + d^2): linear in L for a fixed C."""

import numpy as np

CHUNK = 32


def phi(x):
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


def linear_attention(query, key, value, causal=False):
    if np.ndim(query) != 4 or np.ndim(key) != 4 or np.ndim(value) != 4:
        raise ValueError("inputs must be (B, H, L, d)")
    if query.shape[:3] != key.shape[:3] or value.shape[:3] != key.shape[:3] or query.shape[3] != key.shape[3]:
        raise ValueError("shape mismatch")
    dtype = query.dtype
    calc = np.float32 if dtype == np.float16 else dtype
    q, k, v = phi(query.astype(calc)), phi(key.astype(calc)), value.astype(calc)
    if not causal:
        S = np.swapaxes(k, -1, -2) @ v
        z = k.sum(axis=-2)
        return ((q @ S) / (q @ z[..., None])).astype(dtype)
    B, H, L, d_k = q.shape
    S = np.zeros((B, H, d_k, v.shape[-1]), dtype=calc)
    z = np.zeros((B, H, d_k), dtype=calc)
    out = np.empty((B, H, L, v.shape[-1]), dtype=calc)
    for s in range(0, L, CHUNK):
        qc, kc, vc = q[:, :, s:s + CHUNK], k[:, :, s:s + CHUNK], v[:, :, s:s + CHUNK]
        a = np.tril(qc @ np.swapaxes(kc, -1, -2))            # (B, H, C, C), within the chunk only
        num = qc @ S + a @ vc
        den = qc @ z[..., None] + a.sum(axis=-1, keepdims=True)
        out[:, :, s:s + CHUNK] = num / den
        S = S + np.swapaxes(kc, -1, -2) @ vc
        z = z + kc.sum(axis=-2)
    return out.astype(dtype)
