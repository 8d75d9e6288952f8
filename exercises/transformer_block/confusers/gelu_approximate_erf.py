"""Confuser: GELU built on a hand-written erf (Abramowitz and Stegun 7.1.26, error up to 1.5e-7): float64
throughout, off by float32's size. float32_internals replayed it within its REPLAY_ERROR_RATIO; its
replay now also needs every value of the output to be a float32 number, which these are not. From a
confuser hunt.

Must not name: float32_internals, tanh_gelu, sigmoid_gelu
"""

import math

import torch
import torch.nn.functional as F

EPS = 1e-5


def layer_norm(x, weight, bias, eps=EPS):
    """LayerNorm over the last axis: ``(x - mean) / sqrt(var + eps) * weight + bias``, biased variance.

    Args:
        x: (..., D) tensor. weight, bias: (D,) tensors. eps: added to the variance (inside the root).

    Returns:
        (..., D) tensor in ``x``'s dtype.
    """
    mean = x.mean(dim=-1, keepdim=True)                       # (..., 1)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)        # (..., 1) population variance
    return (x - mean) / torch.sqrt(var + eps) * weight + bias  # (..., D)


def attention(x, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head self-attention of ``x`` (B, L, D) as in the ``mha`` exercise; returns (B, L, D)."""
    B, L, D = x.shape
    H, d_k = num_heads, D // num_heads
    q = (x @ W_q).view(B, L, H, d_k).transpose(1, 2)          # (B, H, L, d_k)
    k = (x @ W_k).view(B, L, H, d_k).transpose(1, 2)          # (B, H, L, d_k)
    v = (x @ W_v).view(B, L, H, d_k).transpose(1, 2)          # (B, H, L, d_k)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H, L, L)
    if mask is not None:
        keep = mask != 0                                      # broadcasts to (B, H, L, L)
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)
        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)  # a fully masked row gives weights 0
    else:
        att = F.softmax(att, dim=-1)
    y = (att @ v).transpose(1, 2).contiguous().view(B, L, D)  # (B, L, D) heads side by side
    return y @ W_o                                            # (B, L, D)


def erf(z):
    """erf by Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7)."""
    sign = torch.sign(z)
    a = z.abs()
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * torch.exp(-a * a))


def gelu(x):
    """Exact GELU, ``0.5 * x * (1 + erf(x / sqrt(2)))``."""
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def transformer_block(x, params, num_heads, mask=None):
    """One pre-LN transformer block in eval mode.

    Args:
        x: (B, L, D) tensor.
        params: dict of tensors ``ln1_weight, ln1_bias, ln2_weight, ln2_bias`` (D,), ``W_q, W_k, W_v,
            W_o`` (D, D), ``W_1`` (D, d_ff), ``b_1`` (d_ff,), ``W_2`` (d_ff, D), ``b_2`` (D,); all
            used as ``x @ W + b``.
        num_heads: H; must divide D.
        mask: None, or a bool/numeric tensor broadcastable to (B, H, L, L); nonzero = may attend.

    Returns:
        (B, L, D) tensor in ``x``'s dtype, differentiable in ``x`` and every parameter.

    Raises:
        ValueError: ``D % num_heads != 0``.
    """
    B, L, D = x.shape
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    p = params
    h = x + attention(layer_norm(x, p["ln1_weight"], p["ln1_bias"]), num_heads,
                      p["W_q"], p["W_k"], p["W_v"], p["W_o"], mask)  # (B, L, D)
    f = gelu(layer_norm(h, p["ln2_weight"], p["ln2_bias"]) @ p["W_1"] + p["b_1"])  # (B, L, d_ff)
    return h + f @ p["W_2"] + p["b_2"]                                             # (B, L, D)
