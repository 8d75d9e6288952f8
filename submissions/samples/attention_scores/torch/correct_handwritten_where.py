"""Correct (PyTorch track): hand-written softmax: -inf fill with torch.where, a detached max made
finite, exp, a denominator replaced by 1 where it is 0 (so no 0/0 in value or gradient)."""
import torch


def compute_attention_scores(query, key, mask=None):
    scale = query.shape[-1] ** -0.5
    s = torch.einsum("...qd,...kd->...qk", query * scale, key)
    if mask is not None:
        s = torch.where(mask.bool(), s, torch.tensor(float("-inf"), dtype=s.dtype))
    m = s.amax(dim=-1, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(s - m)
    z = e.sum(dim=-1, keepdim=True)
    return e / torch.where(z == 0, torch.ones_like(z), z)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return torch.einsum("...qk,...kv->...qv", w, value), w
