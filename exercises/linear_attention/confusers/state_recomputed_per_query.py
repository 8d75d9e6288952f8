"""Confuser: on the causal path, the state S_i = sum_{j <= i} phi(k_j) v_j^T and z_i are recomputed
from scratch for every query i (a loop over queries, each summing its prefix), so the work grows like
L^2 although no L x L matrix phi(Q) phi(K)^T (nor an L x L mask) is ever formed; the values are right.

The bank's causal_state_recomputed is this very structure (the state summed again at every position),
so its cost replay may name it.

Must not name: "L x L matrix phi(Q) phi(K)^T (masked on the causal path) is formed", "is held"
May name: causal_state_recomputed
"""
import numpy as np


def _phi(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(query, key, value, causal=False):
    for name, a in (("query", query), ("key", key), ("value", value)):
        if np.ndim(a) != 4:
            raise ValueError(f"{name} must be 4-D")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("query, key and value do not match")
    dtype = query.dtype
    work = np.float32 if dtype == np.float16 else dtype
    q, k, v = (a.astype(work) for a in (query, key, value))
    phi_q, phi_k = _phi(q), _phi(k)
    if not causal:
        S = np.swapaxes(phi_k, -1, -2) @ v
        z = phi_k.sum(axis=2)
        return ((phi_q @ S) / (phi_q @ z[..., None])).astype(dtype)
    L = q.shape[2]
    out = np.empty(v.shape, dtype=work)
    for i in range(L):                                   # the prefix is summed again for every query
        S_i = np.swapaxes(phi_k[:, :, :i + 1], -1, -2) @ v[:, :, :i + 1]   # (B, H, d_k, d_v)
        z_i = phi_k[:, :, :i + 1].sum(axis=2)                              # (B, H, d_k)
        num = np.einsum("bhd,bhde->bhe", phi_q[:, :, i], S_i)
        den = np.einsum("bhd,bhd->bh", phi_q[:, :, i], z_i)[..., None]
        out[:, :, i] = num / den
    return out.astype(dtype)
