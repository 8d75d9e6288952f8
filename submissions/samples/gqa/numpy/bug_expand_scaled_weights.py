"""Bug: W_k and W_v expanded to (D, D) so keys and values are projected at every query head, with the
1/sqrt(d_k) scale folded into W_k (W_k * scale) and W_v times 1.0: a ufunc's result kept no provenance,
and the K/V work escaped the probe (helper hunt).

Must fail: kv_flops
Mistake: kv_weights_expanded
"""

import math

import numpy as np


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    B, L, D = x.shape
    if D % num_query_heads or num_query_heads % num_kv_heads:
        raise ValueError("heads do not divide")
    d_k = D // num_query_heads
    g = num_query_heads // num_kv_heads
    Wk = np.repeat((W_k * (1.0 / math.sqrt(d_k))).astype(x.dtype).reshape(D, num_kv_heads, d_k), g, axis=1).reshape(D, D)
    Wv = np.repeat((W_v * 1.0).reshape(D, num_kv_heads, d_k), g, axis=1).reshape(D, D)
    q = (x @ W_q).reshape(B, L, num_query_heads, d_k).transpose(0, 2, 1, 3)
    k = (x @ Wk).reshape(B, L, num_query_heads, d_k).transpose(0, 2, 1, 3)
    v = (x @ Wv).reshape(B, L, num_query_heads, d_k).transpose(0, 2, 1, 3)
    s = q @ k.transpose(0, 1, 3, 2)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    t = e.sum(-1, keepdims=True)
    w = np.divide(e, t, out=np.zeros_like(e), where=t > 0)
    return ((w @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ W_o).astype(x.dtype)
