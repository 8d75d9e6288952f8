"""Correct (NumPy track): float64 projections by einsum against (D, H, d_k) weight views, and the
attention output, value product and W_o in one three-operand np.einsum(..., optimize=True), which NumPy
contracts pair by pair (the FLOPs probe must count it that way)."""
import numpy as np
def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, Lq, D = query.shape
    if D % num_heads:
        raise ValueError("bad")
    H, d = num_heads, D // num_heads
    f = lambda x, W: np.einsum("bld,dhk->bhlk", np.asarray(x, dtype=np.float64), np.asarray(W, dtype=np.float64).reshape(D, H, d), optimize=True)
    q, k, v = f(query, W_q), f(key, W_k), f(value, W_v)
    s = np.einsum("bhqd,bhkd->bhqk", q, k, optimize=True) / np.sqrt(d)
    if mask is not None:
        s = np.where(np.asarray(mask) != 0, s, -np.inf)
    m = s.max(-1, keepdims=True); m[~np.isfinite(m)] = 0
    e = np.exp(s - m); z = e.sum(-1, keepdims=True)
    w = np.divide(e, z, out=np.zeros_like(e), where=z > 0)
    y = np.einsum("bhqk,bhkd,hdo->bqo", w, v, np.asarray(W_o, dtype=np.float64).reshape(H, d, D), optimize=True)
    return y.astype(query.dtype)
