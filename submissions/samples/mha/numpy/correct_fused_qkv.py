"""Correct (NumPy track): the three projections as one matmul against the concatenated weights when
query, key and value are the same array (self-attention), separately otherwise; float64 inside,
scores by einsum, weights multiplied by the mask after exp, cast back."""
import numpy as np


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    H, d = num_heads, D // num_heads
    f = np.float64
    if query is key and key is value:
        qkv = query.astype(f) @ np.concatenate([W_q, W_k, W_v], axis=1).astype(f)
        Q, K, V = np.split(qkv, 3, axis=-1)
    else:
        Q, K, V = query.astype(f) @ W_q.astype(f), key.astype(f) @ W_k.astype(f), value.astype(f) @ W_v.astype(f)
    Q = Q.reshape(B, L_q, H, d)
    K = K.reshape(B, -1, H, d)
    V = V.reshape(B, -1, H, d)
    s = np.einsum("bqhd,bkhd->bhqk", Q, K) / np.sqrt(d)
    keep = np.ones(s.shape, f) if mask is None else np.broadcast_to(np.asarray(mask) != 0, s.shape).astype(f)
    s = np.where(keep > 0, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    m[~np.isfinite(m)] = 0
    e = np.exp(s - m) * keep
    z = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    ctx = np.einsum("bhqk,bkhd->bqhd", w, V).reshape(B, L_q, D)
    return (ctx @ W_o.astype(f)).astype(query.dtype)
