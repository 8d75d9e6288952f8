"""Wrong: the causal path recomputes the state from scratch for every query, phi(K[:i+1])^T [V | 1], with
the ndarray.dot method: O(L^2 d_k d_v) work instead of a running state. The method went past the NumPy
FLOP counter (full marks). From a helper hunt.

Must fail: flops_scaling
Mistake: causal_state_recomputed
"""
import numpy as np


def _phi(x):
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(query, key, value, causal=False):
    for a in (query, key, value):
        if np.ndim(a) != 4:
            raise ValueError("inputs must be 4-D")
    if query.shape[:3] != key.shape[:3] or key.shape[:3] != value.shape[:3] or query.shape[-1] != key.shape[-1]:
        raise ValueError("shapes disagree")
    dtype = query.dtype
    work = np.float32 if dtype == np.float16 else dtype
    q, k, v = (a.astype(work) for a in (query, key, value))
    pq, pk = _phi(q), _phi(k)
    B, H, L, d_v = v.shape
    va = np.concatenate([v, np.ones((B, H, L, 1), dtype=work)], axis=-1)   # [V | 1]
    out = np.empty((B, H, L, d_v + 1), dtype=work)
    for b in range(B):
        for h in range(H):
            if not causal:
                S = pk[b, h].T.dot(va[b, h])                    # (d_k, d_v + 1)
                out[b, h] = pq[b, h].dot(S)
            else:
                for i in range(L):
                    S = pk[b, h, :i + 1].T.dot(va[b, h, :i + 1])   # state of the first i+1 keys
                    out[b, h, i] = pq[b, h, i].dot(S)
    return (out[..., :d_v] / out[..., d_v:]).astype(dtype)
