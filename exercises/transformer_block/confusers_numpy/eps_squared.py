"""Confuser: eps = 1e-5 is written as the contract says, but squared inside the root, sqrt(var + eps**2)
(eps read as a floor on the standard deviation): the constant is right, what is added to the variance
(1e-10) is not. The bank's sentence said "used an eps much smaller than 1e-5" (helper hunt); it must say
what the replay proves, that much less than 1e-5 was added to the variance.

Must not name: eps_outside_sqrt, unbiased_variance
May name: eps_too_small
"""

import math

import numpy as np

EPS = 1e-5
_ERF = np.frompyfunc(math.erf, 1, 1)


def layer_norm(x, weight, bias, eps=EPS):
    """LayerNorm over the last axis with the population variance; (..., D) -> (..., D), x's dtype."""
    mean = x.mean(axis=-1, keepdims=True)                      # (..., 1)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)       # (..., 1)
    return (x - mean) / np.sqrt(var + eps ** 2) * weight + bias


def gelu(x):
    """Exact GELU, ``0.5 x (1 + erf(x / sqrt(2)))``, in x's dtype (erf evaluated in float64)."""
    erf = _ERF(x.astype(np.float64) / math.sqrt(2.0)).astype(np.float64)
    return (0.5 * x * (1.0 + erf)).astype(x.dtype)


def attention(x, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head self-attention of ``x`` (B, L, D); returns (B, L, D)."""
    B, L, D = x.shape
    H, d_k = num_heads, D // num_heads
    q = (x @ W_q).reshape(B, L, H, d_k).transpose(0, 2, 1, 3)  # (B, H, L, d_k)
    k = (x @ W_k).reshape(B, L, H, d_k).transpose(0, 2, 1, 3)  # (B, H, L, d_k)
    v = (x @ W_v).reshape(B, L, H, d_k).transpose(0, 2, 1, 3)  # (B, H, L, d_k)
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(np.array(d_k, dtype=x.dtype))  # (B, H, L, L)
    keep = np.ones(s.shape, dtype=bool) if mask is None else np.broadcast_to(np.asarray(mask) != 0, s.shape)
    s = np.where(keep, s, -np.inf)
    m = s.max(axis=-1, keepdims=True)
    e = np.exp(s - np.where(np.isfinite(m), m, 0))            # masked -> 0
    tot = e.sum(axis=-1, keepdims=True)
    att = e / np.where(tot > 0, tot, 1)                        # a fully masked row stays 0
    y = (att @ v).transpose(0, 2, 1, 3).reshape(B, L, D)       # (B, L, D)
    return y @ W_o


def transformer_block(x, params, num_heads, mask=None):
    """One pre-LN block: ``h = x + MHA(LN1(x))``, ``out = h + GELU(LN2(h) @ W_1 + b_1) @ W_2 + b_2``.

    Args:
        x: (B, L, D) array. params: dict of arrays as in the torch track. num_heads: H, divides D.
        mask: None or broadcastable to (B, H, L, L); nonzero = may attend.

    Returns:
        (B, L, D) array in x's dtype.

    Raises:
        ValueError: ``D % num_heads != 0``.
    """
    B, L, D = x.shape
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    p = params
    h = x + attention(layer_norm(x, p["ln1_weight"], p["ln1_bias"]), num_heads,
                      p["W_q"], p["W_k"], p["W_v"], p["W_o"], mask)
    f = gelu(layer_norm(h, p["ln2_weight"], p["ln2_bias"]) @ p["W_1"] + p["b_1"])
    return (h + f @ p["W_2"] + p["b_2"]).astype(x.dtype)
