"""Correct: einsum throughout; causal by cumulative sums of the outer products phi(k_j) v_j^T."""

import numpy as np


def _check(query, key, value):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("query, key and value must be 4-D")
    if query.shape != key.shape or key.shape[:3] != value.shape[:3]:
        raise ValueError("shapes do not agree")


def linear_attention(query, key, value, causal=False):
    _check(query, key, value)
    out_dtype = query.dtype
    work = np.float32 if out_dtype == np.float16 else out_dtype
    q, k, v = query.astype(work), key.astype(work), value.astype(work)
    fq = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0)))
    fk = np.where(k > 0, k + 1, np.exp(np.minimum(k, 0)))
    if causal:
        kv = np.cumsum(np.einsum("bhld,bhle->bhlde", fk, v), axis=2)
        ksum = np.cumsum(fk, axis=2)
        num = np.einsum("bhld,bhlde->bhle", fq, kv)
        den = np.einsum("bhld,bhld->bhl", fq, ksum)
    else:
        kv = np.einsum("bhld,bhle->bhde", fk, v)
        ksum = fk.sum(axis=2)
        num = np.einsum("bhld,bhde->bhle", fq, kv)
        den = np.einsum("bhld,bhd->bhl", fq, ksum)
    return (num / den[..., None]).astype(out_dtype)
