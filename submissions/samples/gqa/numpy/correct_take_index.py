"""Correct (NumPy track): the head mapping as an index array (np.arange(H_q) // group) and np.take along
the head axis, float64 internally, mask as a multiplicative 0/1 factor after exp, cast back."""
import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads:
        raise ValueError("D % num_query_heads != 0")
    if num_query_heads % num_kv_heads:
        raise ValueError("num_query_heads % num_kv_heads != 0")
    d = D // num_query_heads
    x64 = x.astype(np.float64)
    heads = lambda t, H: t.reshape(B, L, H, d).transpose(0, 2, 1, 3)
    q = heads(x64 @ W_q.astype(np.float64), num_query_heads)
    k = heads(x64 @ W_k.astype(np.float64), num_kv_heads)
    v = heads(x64 @ W_v.astype(np.float64), num_kv_heads)
    idx = np.arange(num_query_heads) // (num_query_heads // num_kv_heads)
    k, v = np.take(k, idx, axis=1), np.take(v, idx, axis=1)
    s = q @ k.swapaxes(-1, -2) / np.sqrt(d)
    keep = np.ones_like(s) if mask is None else np.broadcast_to(np.asarray(mask) != 0, s.shape).astype(np.float64)
    s = np.where(keep > 0, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top[~np.isfinite(top)] = 0
    e = np.exp(s - top) * keep
    z = e.sum(-1, keepdims=True)
    w = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    y = (w @ v).swapaxes(1, 2).reshape(B, L, D)
    return (y @ W_o.astype(np.float64)).astype(x.dtype)
