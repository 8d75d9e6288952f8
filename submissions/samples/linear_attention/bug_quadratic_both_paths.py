"""Bug: softmax attention with exp replaced by the elu + 1 kernel, i.e. the L x L weight matrix
phi(Q) phi(K)^T on both paths (masked when causal), normalised row by row: right values, but L^2
work and memory.

Must fail: flops_scaling, memory_scaling
Mistake: quadratic_both_paths
"""

import numpy as np


def linear_attention(query, key, value, causal=False):
    if query.ndim != 4 or key.shape != query.shape or value.ndim != 4 or value.shape[:3] != query.shape[:3]:
        raise ValueError("bad shapes")
    dt = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = query.astype(dt), key.astype(dt), value.astype(dt)
    fq = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0)))
    fk = np.where(k > 0, k + 1, np.exp(np.minimum(k, 0)))
    weights = np.einsum("bhid,bhjd->bhij", fq, fk)                        # (B, H, L, L)
    if causal:
        weights = np.tril(weights)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.einsum("bhij,bhje->bhie", weights, v).astype(query.dtype)
