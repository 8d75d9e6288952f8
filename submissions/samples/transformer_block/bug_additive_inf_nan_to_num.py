"""Bug: an additive -inf mask with nan_to_num after the softmax (attention in float32 for half
inputs, einsum heads). The forward output is right everywhere, fully masked rows included
(NaN -> 0), but the gradients of x, W_q, W_k and ln1 are NaN wherever a query row is fully masked:
the softmax of an all -inf row has no derivative. It scored 21/21 before grad_x and grad_params had
a fully masked case.

Must fail: grad_x, grad_params
Mistake: additive_inf_mask_nan_to_num
"""
import math
import torch

EPS = 1e-5


def transformer_block(x, params, num_heads, mask=None):
    B, L, D = x.shape
    if D % num_heads != 0:
        raise ValueError("bad num_heads")
    dt = x.dtype
    ct = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    x = x.to(ct)
    P = {k: v.to(ct) for k, v in params.items()}

    def ln(t, i):
        mu = t.mean(-1, keepdim=True)
        var = (t - mu).pow(2).mean(-1, keepdim=True)
        return (t - mu) / (var + EPS).sqrt() * P[f"ln{i}_weight"] + P[f"ln{i}_bias"]

    dk = D // num_heads
    a = ln(x, 1)
    q = torch.einsum("bld,dhk->bhlk", a, P["W_q"].view(D, num_heads, dk))
    k = torch.einsum("bld,dhk->bhlk", a, P["W_k"].view(D, num_heads, dk))
    v = torch.einsum("bld,dhk->bhlk", a, P["W_v"].view(D, num_heads, dk))
    s = torch.einsum("bhik,bhjk->bhij", q, k) / math.sqrt(dk)
    if mask is not None:
        allow = mask.bool()
        s = s + torch.zeros_like(s).masked_fill(~allow, float("-inf"))
        w = torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)
    else:
        w = torch.softmax(s, dim=-1)
    o = torch.einsum("bhij,bhjk->bihk", w, v).reshape(B, L, D)
    h = x + o @ P["W_o"]
    u = ln(h, 2) @ P["W_1"] + P["b_1"]
    g = u * 0.5 * (1.0 + torch.erf(u * (1.0 / math.sqrt(2.0))))
    return (h + g @ P["W_2"] + P["b_2"]).to(dt)
