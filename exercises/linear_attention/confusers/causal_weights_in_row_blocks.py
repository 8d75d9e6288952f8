"""Confuser: on the causal path, the masked weights phi(Q) phi(K)^T are formed for 16 queries at a time
(a (16, L) block, masked to j <= i, normalised by its row sums and multiplied by V): memory stays linear
but the work grows like L^2 d. The bank's causal_state_recomputed also grows like L^2 on the causal
path, by re-summing the state (L^2 d_k d_v), with other figures: its cost replay must not name it.

Must not name: causal_state_recomputed
"""
import numpy as np


def _phi(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(query, key, value, causal=False):
    for name, a in (("query", query), ("key", key), ("value", value)):
        if np.ndim(a) != 4:
            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {np.shape(a)}")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3]:
        raise ValueError(f"query, key and value must share (B, H, L): got {query.shape}, {key.shape}, {value.shape}")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(f"query and key must share d_k: got {query.shape[-1]} and {key.shape[-1]}")
    dtype = query.dtype
    work = np.float32 if dtype == np.float16 else dtype
    q, k, v = (a.astype(work) for a in (query, key, value))
    pq, pk = _phi(q), _phi(k)
    if not causal:
        S = np.swapaxes(pk, -1, -2) @ v
        return ((pq @ S) / (pq @ pk.sum(axis=2)[..., None])).astype(dtype)
    L = q.shape[2]
    out = np.empty(v.shape, dtype=work)
    kt = np.swapaxes(pk, -1, -2)
    for s in range(0, L, 16):
        e = min(s + 16, L)
        A = (pq[:, :, s:e] @ kt) * (np.arange(L)[None, :] <= np.arange(s, e)[:, None])  # (B, H, rows, L)
        out[:, :, s:e] = (A @ v) / A.sum(axis=-1, keepdims=True)
    return out.astype(dtype)
