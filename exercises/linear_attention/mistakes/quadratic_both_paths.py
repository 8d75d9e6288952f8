"""softmax attention with exp swapped for the kernel: the L x L weights phi(Q) phi(K)^T (lower triangle when causal) were normalised row by row and multiplied by V on both paths; the values are right, but work and memory grow like L^2. Linear attention regroups the product: S = sum_j phi(k_j) v_j^T and z = sum_j phi(k_j) (prefix sums when causal), then phi(q_i)^T S / phi(q_i)^T z (Katharopoulos et al. 2020, eq. 4-6).

Must fail: flops_scaling, memory_scaling
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
    A = _phi(q) @ np.swapaxes(_phi(k), -1, -2)                  # (B, H, L, L): the weights, unnormalised
    if causal:
        A = np.tril(A)
    A = A / A.sum(axis=-1, keepdims=True)                       # rows sum to 1
    return (A @ v).astype(dtype)
