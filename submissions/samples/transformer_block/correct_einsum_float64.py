"""Correct: every step in float64 internally (cast back at the end), einsum for the projections and
the attention, LayerNorm through torch.var_mean(correction=0), a fully masked row zeroed by where."""

import math

import torch


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError("d_model % num_heads != 0")
    H, d = num_heads, D // num_heads
    dt = x.dtype
    P = {k: v.to(torch.float64) for k, v in params.items()}
    x64 = x.to(torch.float64)

    def ln(z, i):
        var, mean = torch.var_mean(z, dim=-1, keepdim=True, correction=0)
        return (z - mean) / torch.sqrt(var + 1e-5) * P[f"ln{i}_weight"] + P[f"ln{i}_bias"]

    a = ln(x64, 1)
    q = torch.einsum("bld,de->ble", a, P["W_q"]).reshape(B, L, H, d)
    k = torch.einsum("bld,de->ble", a, P["W_k"]).reshape(B, L, H, d)
    v = torch.einsum("bld,de->ble", a, P["W_v"]).reshape(B, L, H, d)
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(d)
    if mask is not None:
        keep = torch.broadcast_to(mask.to(torch.float64) != 0, s.shape)
        s = s.masked_fill(~keep, float("-inf"))
        w = torch.softmax(s, dim=-1)
        w = torch.where(keep.any(dim=-1, keepdim=True), w, torch.zeros_like(w))
    else:
        w = torch.softmax(s, dim=-1)
    y = torch.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, L, D)
    h = x64 + torch.einsum("bld,de->ble", y, P["W_o"])
    z = ln(h, 2) @ P["W_1"] + P["b_1"]
    z = z * 0.5 * (1 + torch.erf(z * (1 / math.sqrt(2))))
    return (h + z @ P["W_2"] + P["b_2"]).to(dt)
