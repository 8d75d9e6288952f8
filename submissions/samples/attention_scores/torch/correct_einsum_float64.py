"""Correct (PyTorch track): einsum on broadcast operands, softmax by hand in float64, cast back."""

import torch


def compute_attention_scores(query, key, mask=None):
    batch = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    q = query.double().expand(*batch, *query.shape[-2:])
    k = key.double().expand(*batch, *key.shape[-2:])
    s = torch.einsum("...qd,...kd->...qk", q, k) * query.shape[-1] ** -0.5
    if mask is not None:
        s = torch.where(mask != 0, s, torch.tensor(float("-inf"), dtype=s.dtype))
    m = s.max(dim=-1, keepdim=True).values
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    e = torch.exp(s - m)
    tot = e.sum(-1, keepdim=True)
    w = torch.where(tot > 0, e / tot.clamp_min(1e-300), torch.zeros_like(e))
    return w.to(query.dtype)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    batch = torch.broadcast_shapes(w.shape[:-2], value.shape[:-2])
    out = torch.einsum("...qk,...kd->...qd", w.double().expand(*batch, *w.shape[-2:]),
                       value.double().expand(*batch, *value.shape[-2:]))
    return out.to(query.dtype), w
