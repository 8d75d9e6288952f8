"""Bug: only mask entries equal to 1 may attend (`mask == 1`), where the contract says nonzero / True
may attend; a 0/1 mask hides it, a mask of 0 / 3 (or 0.5, -2.0) does not.

Must fail: numeric_mask
Mistake: mask_equals_one
"""

import math

import numpy as np

_erf = np.frompyfunc(math.erf, 1, 1)


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError("D % num_heads != 0")
    H, d = num_heads, D // num_heads
    p = {k: np.asarray(v, dtype=np.float64) for k, v in params.items()}
    z = x.astype(np.float64)

    def ln(t, i):
        mu = t.mean(axis=-1, keepdims=True)
        var = np.mean((t - mu) ** 2, axis=-1, keepdims=True)
        return (t - mu) / np.sqrt(var + 1e-5) * p[f"ln{i}_weight"] + p[f"ln{i}_bias"]

    a = ln(z, 1)
    q, k, v = (np.einsum("bld,de->ble", a, p[w]).reshape(B, L, H, d) for w in ("W_q", "W_k", "W_v"))
    s = np.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d)
    if mask is not None:
        s = np.where(np.asarray(mask) == 1, s, -np.inf)
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    e = np.exp(s - m)
    tot = e.sum(axis=-1, keepdims=True)
    w = np.divide(e, tot, out=np.zeros_like(e), where=tot > 0)
    h = z + np.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, L, D) @ p["W_o"]
    u = ln(h, 2) @ p["W_1"] + p["b_1"]
    g = 0.5 * u * (1 + _erf(u / math.sqrt(2)).astype(np.float64))
    return (h + g @ p["W_2"] + p["b_2"]).astype(x.dtype)
