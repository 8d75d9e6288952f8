"""Bug: post-LN order (the original Transformer's): LayerNorm after each residual add.

Must fail: values
Mistake: post_layer_norm
"""

import math

import torch


def layer_norm(x, weight, bias, eps=1e-5):
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return weight * (x - mean) / torch.sqrt(var + eps) + bias


def attention(x, p, num_heads, mask):
    B, L, D = x.shape
    d_k = D // num_heads
    q = (x @ p["W_q"]).view(B, L, num_heads, d_k).transpose(1, 2)
    k = (x @ p["W_k"]).view(B, L, num_heads, d_k).transpose(1, 2)
    v = (x @ p["W_v"]).view(B, L, num_heads, d_k).transpose(1, 2)
    s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    return (w @ v).transpose(1, 2).reshape(B, L, D) @ p["W_o"]


def transformer_block(x, params, num_heads, mask=None):
    if x.shape[-1] % num_heads:
        raise ValueError("D % num_heads != 0")
    p = params
    h = layer_norm(x + attention(x, p, num_heads, mask), p["ln1_weight"], p["ln1_bias"])
    z = h @ p["W_1"] + p["b_1"]
    f = 0.5 * z * (1.0 + torch.erf(z / math.sqrt(2.0))) @ p["W_2"] + p["b_2"]
    return layer_norm(h + f, p["ln2_weight"], p["ln2_bias"])
