"""Wrong (NumPy track): only D % num_query_heads is checked; num_query_heads % num_kv_heads != 0
falls through to integer division (group rounds down) and no ValueError is raised.

Must fail: bad_group
Mistake: no_group_check
"""
import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads:
        raise ValueError("bad heads")
    d, g = D // num_query_heads, max(1, num_query_heads // num_kv_heads)
    heads = lambda t, H: t.reshape(B, L, H, d).transpose(0, 2, 1, 3)
    q, k, v = heads(x @ W_q, num_query_heads), heads(x @ W_k, num_kv_heads), heads(x @ W_v, num_kv_heads)
    idx = np.minimum(np.arange(num_query_heads) // g, num_kv_heads - 1)
    k, v = k[:, idx], v[:, idx]
    s = q @ k.swapaxes(-1, -2) / np.sqrt(d).astype(x.dtype)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    top = s.max(-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0)
    e = np.exp(s - top)
    z = e.sum(-1, keepdims=True)
    w = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    return ((w @ v).swapaxes(1, 2).reshape(B, L, D) @ W_o).astype(x.dtype)
