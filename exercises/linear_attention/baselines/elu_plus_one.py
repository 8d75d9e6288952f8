"""Baseline: linear attention with phi computed as the textbook elu(x) + 1, elu(x) = exp(x) - 1 for x <= 0.

Correct, but for features far below zero the ``+ 1`` cancels: ``(exp(x) - 1) + 1`` keeps an absolute
error of about one float32 ulp of 1 (6e-8) on a phi of ``exp(x)``, so at ``x = -6`` phi is off by about
2e-5 relative, an error the reference (``exp(x)`` directly) does not make. The paper's code writes
phi this way (``F.elu(x) + 1``), so the tolerance must allow it: this file runs on the host only,
beside the reference, and its error widens the tolerance (``grader.judge.tolerance``).
"""

import numpy as np


def linear_attention(query, key, value, causal=False):
    """phi(q_i)^T S / phi(q_i)^T z with phi = (exp(x) - 1) + 1 below zero; (B, H, L, d_v) in query's dtype."""
    if any(np.ndim(a) != 4 for a in (query, key, value)) or query.shape[:3] != key.shape[:3] \
            or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("query, key, value must be (B, H, L, d_k), (B, H, L, d_k), (B, H, L, d_v)")
    dtype = query.dtype
    work = np.float32 if dtype == np.float16 else dtype
    q, k, v = (a.astype(work) for a in (query, key, value))
    with np.errstate(over="ignore"):
        phi_q = np.where(q > 0, q, np.exp(q) - 1) + 1                       # (B, H, L, d_k)
        phi_k = np.where(k > 0, k, np.exp(k) - 1) + 1
    if causal:
        S = np.cumsum(phi_k[..., :, None] * v[..., None, :], axis=2)       # (B, H, L, d_k, d_v)
        z = np.cumsum(phi_k, axis=2)                                       # (B, H, L, d_k)
        out = np.einsum("bhld,bhlde->bhle", phi_q, S) / np.sum(phi_q * z, axis=-1, keepdims=True)
    else:
        out = (phi_q @ (np.swapaxes(phi_k, -1, -2) @ v)) / (phi_q @ phi_k.sum(axis=2)[..., None])
    return out.astype(dtype)
