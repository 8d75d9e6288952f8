"""Correct (NumPy track): K/V projected once at num_kv_heads width, then a Python loop over query heads
that slices the KV columns of head h // group, a log-sum-exp softmax per head, outputs concatenated."""
import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads != 0 or num_query_heads % num_kv_heads != 0:
        raise ValueError("invalid head counts")
    d = D // num_query_heads
    group = num_query_heads // num_kv_heads
    Q, K, V = x @ W_q, x @ W_k, x @ W_v
    allowed = None if mask is None else np.broadcast_to(np.asarray(mask).astype(bool), (B, num_query_heads, L, L))
    outs = []
    for h in range(num_query_heads):
        kv = h // group
        q = Q[..., h * d:(h + 1) * d]
        k = K[..., kv * d:(kv + 1) * d]
        v = V[..., kv * d:(kv + 1) * d]
        s = np.einsum("bld,bmd->blm", q, k) / np.sqrt(d)
        if allowed is not None:
            s = np.where(allowed[:, h], s, -np.inf)
        lse = np.logaddexp.reduce(s, axis=-1, keepdims=True)
        dead = np.isneginf(lse)
        with np.errstate(invalid="ignore"):
            w = np.where(dead, 0.0, np.exp(s - np.where(dead, 0.0, lse)))
        outs.append(np.einsum("blm,bmd->bld", w, v))
    return (np.concatenate(outs, axis=-1) @ W_o).astype(x.dtype)
