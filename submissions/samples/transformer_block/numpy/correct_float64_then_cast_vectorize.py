"""Correct: everything promoted to float64 up front (np.asarray(..., float64)), np.vectorize erf with otypes, reshape/transpose heads, cast back at the end."""
import math
import numpy as np

erf = np.vectorize(math.erf, otypes=[np.float64])


def transformer_block(x, params, num_heads, mask=None):
    dtype = np.asarray(x).dtype
    x = np.asarray(x, dtype=np.float64)
    B, L, D = x.shape
    if D % num_heads:
        raise ValueError("bad num_heads")
    P = {n: np.asarray(a, dtype=np.float64) for n, a in params.items()}
    H, dk = num_heads, D // num_heads

    def ln(t, w, b):
        mu = np.mean(t, axis=-1, keepdims=True)
        sd = np.sqrt(np.var(t, axis=-1, keepdims=True, ddof=0) + 1e-5)
        return (t - mu) / sd * w + b

    def split(t):
        return t.reshape(B, L, H, dk).transpose(0, 2, 1, 3)

    a = ln(x, P["ln1_weight"], P["ln1_bias"])
    q, k, v = split(a @ P["W_q"]), split(a @ P["W_k"]), split(a @ P["W_v"])
    s = np.matmul(q, k.transpose(0, 1, 3, 2)) * (1.0 / math.sqrt(dk))
    allowed = np.ones_like(s, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask).astype(bool), s.shape)
    s = np.where(allowed, s, -np.inf)
    rowmax = np.max(s, axis=-1, keepdims=True, initial=-np.inf, where=allowed)
    e = np.exp(s - np.where(np.isfinite(rowmax), rowmax, 0.0), where=allowed, out=np.zeros_like(s))
    den = e.sum(-1, keepdims=True)
    w = np.divide(e, den, out=np.zeros_like(e), where=den > 0)
    y = (w @ v).transpose(0, 2, 1, 3).reshape(B, L, D) @ P["W_o"]
    h = x + y
    u = ln(h, P["ln2_weight"], P["ln2_bias"]) @ P["W_1"] + P["b_1"]
    out = h + (0.5 * u * (1 + erf(u / math.sqrt(2)))) @ P["W_2"] + P["b_2"]
    return out.astype(dtype)
