"""Bug: the non-causal path uses the kernel trick, but the causal one builds phi(Q) phi(K)^T (L x L),
zeroes its upper triangle (np.tril) and normalises the rows: right values, quadratic work and memory.

Must fail: flops_scaling, memory_scaling
Mistake: causal_quadratic_detour
"""

import numpy as np


def elu1(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(query, key, value, causal=False):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("need 4-D inputs")
    if query.shape != key.shape or value.shape[:3] != query.shape[:3]:
        raise ValueError("shape mismatch")
    t = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = elu1(query.astype(t)), elu1(key.astype(t)), value.astype(t)
    if causal:
        w = np.tril(q @ k.transpose(0, 1, 3, 2))                        # (B, H, L, L)
        out = (w @ v) / w.sum(-1, keepdims=True)
    else:
        out = (q @ (k.transpose(0, 1, 3, 2) @ v)) / (q @ k.sum(2)[..., None])
    return out.astype(query.dtype)
