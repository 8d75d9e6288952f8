"""Bug (NumPy): LayerNorm with the unbiased variance (ddof=1).

Must fail: values
Mistake: unbiased_variance
"""

import math

import numpy as np

erf = np.vectorize(math.erf)


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads:
        raise ValueError("num_heads must divide d_model")
    d = D // num_heads
    P = params

    def ln(z, g, b):
        return (z - z.mean(-1, keepdims=True)) / np.sqrt(z.var(-1, keepdims=True, ddof=1) + 1e-5) * g + b

    a = ln(x, P["ln1_weight"], P["ln1_bias"])
    Q, K, V = a @ P["W_q"], a @ P["W_k"], a @ P["W_v"]
    keep = None if mask is None else np.broadcast_to(np.asarray(mask) != 0, (B, num_heads, L, L))
    heads = []
    for h in range(num_heads):
        c = slice(h * d, (h + 1) * d)
        s = Q[..., c] @ np.swapaxes(K[..., c], 1, 2) / math.sqrt(d)
        if keep is not None:
            s = np.where(keep[:, h], s, -np.inf)
        mx = s.max(-1, keepdims=True)
        e = np.exp(s - np.where(np.isinf(mx), 0, mx))
        z = e.sum(-1, keepdims=True)
        heads.append((e / np.where(z == 0, 1, z)) @ V[..., c])
    hdd = x + np.concatenate(heads, axis=-1) @ P["W_o"]
    u = ln(hdd, P["ln2_weight"], P["ln2_bias"]) @ P["W_1"] + P["b_1"]
    g = (0.5 * u * (1 + erf(u / math.sqrt(2)))).astype(x.dtype)
    return (hdd + g @ P["W_2"] + P["b_2"]).astype(x.dtype)
