"""Correct: the token axes flattened to (B*L, D) for every linear map, torch.addmm for the biased FFN layers, einsum for the per-head scores, softmax by exp/sum with an explicit max shift."""
import torch
import torch.nn.functional as F


def layernorm(x2, w, b):
    c = x2 - x2.mean(dim=1, keepdim=True)
    return c * (c.pow(2).mean(dim=1, keepdim=True) + 1e-5).rsqrt() * w + b


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError("bad num_heads")
    H, dk = num_heads, D // num_heads
    x2 = x.reshape(B * L, D)
    a = layernorm(x2, params["ln1_weight"], params["ln1_bias"])
    q = torch.mm(a, params["W_q"]).view(B, L, H, dk)
    k = torch.mm(a, params["W_k"]).view(B, L, H, dk)
    v = torch.mm(a, params["W_v"]).view(B, L, H, dk)
    s = torch.einsum("bqhd,bkhd->bhqk", q, k) * dk ** -0.5
    if mask is not None:
        ok = (mask != 0).expand_as(s) if (mask != 0).dim() == 4 else torch.broadcast_to(mask != 0, s.shape)
        s = s.masked_fill(~ok, torch.finfo(s.dtype).min)
    e = torch.exp(s - s.amax(-1, keepdim=True))
    if mask is not None:
        e = e * ok
    den = e.sum(-1, keepdim=True)
    p = e / torch.where(den == 0, torch.ones_like(den), den)
    y = torch.einsum("bhqk,bkhd->bqhd", p, v).reshape(B * L, D)
    h2 = x2 + torch.mm(y, params["W_o"])
    f = F.gelu(torch.addmm(params["b_1"], layernorm(h2, params["ln2_weight"], params["ln2_bias"]), params["W_1"]))
    return torch.addmm(params["b_2"], f, params["W_2"]).add(h2).view(B, L, D)
