"""Bug: LayerNorm through F.layer_norm, which the exercise forbids (write it by hand).

Must fail: values
Mistake: forbidden_api
"""

import math

import torch
import torch.nn.functional as F


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    d_k = D // num_heads
    p = params
    a = F.layer_norm(x, (D,), p["ln1_weight"], p["ln1_bias"], 1e-5)
    q = (a @ p["W_q"]).view(B, L, num_heads, d_k).transpose(1, 2)
    k = (a @ p["W_k"]).view(B, L, num_heads, d_k).transpose(1, 2)
    v = (a @ p["W_v"]).view(B, L, num_heads, d_k).transpose(1, 2)
    s = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    h = x + (w @ v).transpose(1, 2).reshape(B, L, D) @ p["W_o"]
    f = F.gelu(F.layer_norm(h, (D,), p["ln2_weight"], p["ln2_bias"], 1e-5) @ p["W_1"] + p["b_1"])
    return h + f @ p["W_2"] + p["b_2"]
