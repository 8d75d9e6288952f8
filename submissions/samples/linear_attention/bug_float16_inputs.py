"""Bug: computes in whatever dtype it is given, float16 included: the float16 sums S = phi(K)^T V and
phi(q)^T S overflow 65504 for values in the tens (inf / inf = NaN) and lose digits otherwise.

Must fail: half_precision
Mistake: float16_accumulation
"""

import numpy as np


def linear_attention(query, key, value, causal=False):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("4-D inputs")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("shapes disagree")
    one = query.dtype.type(1)
    fq = np.where(query > 0, query + one, np.exp(np.minimum(query, 0)))
    fk = np.where(key > 0, key + one, np.exp(np.minimum(key, 0)))
    with np.errstate(over="ignore", invalid="ignore"):
        if causal:
            S = np.cumsum(fk[..., :, None] * value[..., None, :], axis=2)
            z = np.cumsum(fk, axis=2)
            return np.einsum("bhld,bhlde->bhle", fq, S) / np.sum(fq * z, axis=-1, keepdims=True)
        S = np.swapaxes(fk, 2, 3) @ value
        return (fq @ S) / (fq @ fk.sum(axis=2)[..., None])
