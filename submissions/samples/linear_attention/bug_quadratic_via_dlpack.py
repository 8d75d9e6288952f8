"""Bug: the quadratic masked form phi(Q) phi(K)^T V in row blocks, on plain ndarrays made with
np.from_dlpack (which dropped the counting array: helper hunt, full marks); np.from_dlpack now keeps it.

Must fail: flops_scaling
"""

import numpy as np
from numpy.lib.stride_tricks import as_strided


def linear_attention(query, key, value, causal=False):
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError("query, key and value must be 4-D")
    if query.shape != key.shape or key.shape[:3] != value.shape[:3]:
        raise ValueError("shapes do not agree")
    out_dtype = query.dtype
    work = np.float32 if out_dtype == np.float16 else out_dtype
    q, k, v = query.astype(work), key.astype(work), value.astype(work)
    fq = np.where(q > 0, q + 1, np.exp(np.minimum(q, 0)))          # counted, linear
    fk = np.where(k > 0, k + 1, np.exp(np.minimum(k, 0)))
    fq, fk, v = np.from_dlpack(fq), np.from_dlpack(fk), np.from_dlpack(np.ascontiguousarray(v))  # plain ndarrays
    L = q.shape[2]
    out = np.empty(v.shape, dtype=work)
    kt = np.swapaxes(fk, -1, -2)
    for s in range(0, L, 16):
        e = min(s + 16, L)
        A = fq[:, :, s:e] @ kt                                      # (B, H, 16, L)
        if causal:
            A = A * (np.arange(L)[None, :] <= np.arange(s, e)[:, None])
        out[:, :, s:e] = (A @ v) / A.sum(-1, keepdims=True)
    return out.astype(out_dtype)
