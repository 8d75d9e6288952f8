"""Correct: np.frompyfunc(math.erf), LN via E[x^2]-E[x]^2 in float64, einsum heads, additive -inf bias with a log-sum-exp softmax."""
import math
import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)


def _ln(z, w, b):
    z64 = z.astype(np.float64)
    mu = z64.mean(-1, keepdims=True)
    var = (z64 * z64).mean(-1, keepdims=True) - mu * mu
    return ((z64 - mu) / np.sqrt(var + 1e-5) * w + b).astype(z.dtype)


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError("D must be divisible by num_heads")
    H, dk = num_heads, D // num_heads
    p = {k: np.asarray(v) for k, v in params.items()}
    a = _ln(x, p["ln1_weight"], p["ln1_bias"])
    q = np.einsum("bld,de->ble", a, p["W_q"]).reshape(B, L, H, dk)
    k = np.einsum("bld,de->ble", a, p["W_k"]).reshape(B, L, H, dk)
    v = np.einsum("bld,de->ble", a, p["W_v"]).reshape(B, L, H, dk)
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(dk)
    if mask is not None:
        bias = np.where(np.asarray(mask).astype(bool), 0.0, -np.inf)
        s = s + bias
    mx = np.max(s, -1, keepdims=True)
    mx = np.where(np.isneginf(mx), 0.0, mx)
    with np.errstate(divide="ignore"):
        lse = mx + np.log(np.exp(s - mx).sum(-1, keepdims=True))
    w = np.where(np.isneginf(lse), 0.0, np.exp(s - np.where(np.isneginf(lse), 0.0, lse)))
    att = np.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, L, D)
    h = x + att @ p["W_o"]
    u = _ln(h, p["ln2_weight"], p["ln2_bias"]) @ p["W_1"] + p["b_1"]
    g = 0.5 * u * (1.0 + _erf(u / math.sqrt(2.0)).astype(np.float64))
    return (h + g.astype(x.dtype) @ p["W_2"] + p["b_2"]).astype(x.dtype)
