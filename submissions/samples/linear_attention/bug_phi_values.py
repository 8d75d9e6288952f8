"""Bug: applies the feature map to queries, keys and values alike.

Must fail: values
Mistake: phi_on_values
"""

import numpy as np


def linear_attention(query, key, value, causal=False):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("inputs must be 4-D")
    if query.shape != key.shape or value.shape[:3] != key.shape[:3]:
        raise ValueError("shapes do not match")
    dt = np.float32 if query.dtype == np.float16 else query.dtype
    q, k, v = (np.where(a > 0, a + 1, np.exp(np.minimum(a, 0))).astype(dt) for a in (query, key, value))
    if causal:
        S = np.cumsum(np.einsum("bhld,bhle->bhlde", k, v), axis=2)
        z = np.cumsum(k, axis=2)
        out = np.einsum("bhld,bhlde->bhle", q, S) / np.einsum("bhld,bhld->bhl", q, z)[..., None]
    else:
        out = (q @ (np.swapaxes(k, -1, -2) @ v)) / (q @ k.sum(axis=2)[..., None])
    return out.astype(query.dtype)
