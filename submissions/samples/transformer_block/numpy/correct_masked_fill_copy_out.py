"""Correct: masked_fill-style (scores copied, masked entries set to a large negative finite value, then zeroed after exp), matmul with out=, in-place ops on copies only."""
import math
import numpy as np

_verf = np.vectorize(math.erf)


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError(f"D={D} not divisible by H={num_heads}")
    H, dk = num_heads, D // num_heads
    dt = x.dtype

    def ln(t, pre):
        t = t.copy()
        t -= t.mean(-1, keepdims=True)
        t /= np.sqrt((t * t).mean(-1, keepdims=True) + dt.type(1e-5))
        t *= params[pre + "_weight"]
        t += params[pre + "_bias"]
        return t

    a = ln(x, "ln1")
    proj = np.empty((3, B, L, D), dtype=dt)
    for i, n in enumerate(("W_q", "W_k", "W_v")):
        np.matmul(a, params[n], out=proj[i])
    q, k, v = (t.reshape(B, L, H, dk).swapaxes(1, 2) for t in proj)
    s = q @ k.swapaxes(-1, -2) / dt.type(math.sqrt(dk))
    keep = None if mask is None else np.broadcast_to(np.asarray(mask) != 0, s.shape)
    if keep is not None:
        s = s.copy()
        s[~keep] = np.finfo(dt).min
    s -= s.max(-1, keepdims=True)
    e = np.exp(s)
    if keep is not None:
        e[~keep] = 0
    den = e.sum(-1, keepdims=True)
    den[den == 0] = 1
    att = (e / den) @ v
    h = x + att.swapaxes(1, 2).reshape(B, L, D) @ params["W_o"]
    u = ln(h, "ln2") @ params["W_1"] + params["b_1"]
    g = (u * 0.5 * (1.0 + _verf(u / math.sqrt(2.0)))).astype(dt)
    return h + g @ params["W_2"] + params["b_2"]
