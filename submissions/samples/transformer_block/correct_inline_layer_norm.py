"""Correct: the block written inline (Q, K, V from three LayerNorm calls, a -inf mask fill with
nan_to_num for fully masked rows, exact erf GELU written out). The bank's one-line mistakes are
written into this style by tests/test_transformer_block.py to prove replay names them here too.
"""

import math

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return weight * (x - mean) / torch.sqrt(var + eps) + bias


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError(f"D={D} must be divisible by num_heads={num_heads}")
    d_k = D // num_heads
    p = params
    q = layer_norm(x, p["ln1_weight"], p["ln1_bias"]) @ p["W_q"]
    k = layer_norm(x, p["ln1_weight"], p["ln1_bias"]) @ p["W_k"]
    v = layer_norm(x, p["ln1_weight"], p["ln1_bias"]) @ p["W_v"]
    q = q.view(B, L, num_heads, d_k).transpose(1, 2)
    k = k.view(B, L, num_heads, d_k).transpose(1, 2)
    v = v.view(B, L, num_heads, d_k).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        scores = scores.masked_fill(mask == 0, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.nan_to_num(weights, nan=0.0)
    attn = (weights @ v).transpose(1, 2).reshape(B, L, D) @ p["W_o"]
    h = x + attn
    z = layer_norm(h, p["ln2_weight"], p["ln2_bias"]) @ p["W_1"] + p["b_1"]
    z = 0.5 * z * (1.0 + torch.erf(z / math.sqrt(2.0)))
    return h + z @ p["W_2"] + p["b_2"]
