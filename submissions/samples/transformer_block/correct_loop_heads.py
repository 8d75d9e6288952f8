"""Correct: LN1 computed once, a Python loop over heads with explicit column slices, a hand-written
softmax (max-subtracted exp / sum) and F.gelu."""

import math

import torch
import torch.nn.functional as F


def _ln(z, g, b):
    mu = z.mean(dim=-1, keepdim=True)
    centered = z - mu
    var = (centered * centered).sum(dim=-1, keepdim=True) / z.shape[-1]
    return centered * torch.rsqrt(var + 1e-5) * g + b


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if num_heads < 1 or D % num_heads:
        raise ValueError("num_heads must divide d_model")
    d_k = D // num_heads
    a = _ln(x, params["ln1_weight"], params["ln1_bias"])
    Q, K, V = a @ params["W_q"], a @ params["W_k"], a @ params["W_v"]
    heads = []
    for h in range(num_heads):
        cols = slice(h * d_k, (h + 1) * d_k)
        s = Q[..., cols] @ K[..., cols].transpose(1, 2) / math.sqrt(d_k)  # (B, L, L)
        if mask is not None:
            m = torch.broadcast_to(mask, (B, num_heads, L, L))[:, h] != 0
            s = torch.where(m, s, torch.tensor(-1e30, dtype=s.dtype) if s.dtype != torch.float16 else torch.tensor(-6e4, dtype=s.dtype))
        e = torch.exp(s - s.max(dim=-1, keepdim=True).values)
        if mask is not None:
            e = e * m
        tot = e.sum(dim=-1, keepdim=True)
        w = e / torch.where(tot > 0, tot, torch.ones_like(tot))
        heads.append(w @ V[..., cols])
    h_ = x + torch.cat(heads, dim=-1) @ params["W_o"]
    f = F.gelu(_ln(h_, params["ln2_weight"], params["ln2_bias"]) @ params["W_1"] + params["b_1"])
    return h_ + f @ params["W_2"] + params["b_2"]
