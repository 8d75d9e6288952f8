"""Confuser: -inf logits are replaced by torch.finfo(x.dtype).min (not -1e9: it fits every dtype, so
float16 never raises) before a max-shifted softmax; an all -inf slice becomes uniform.

A clamp at -80 leaves -inf entries beside finite logits a tiny nonzero weight and fails neg_inf_entries;
this file passes it, so the clamp's replay, which also makes an all -inf slice uniform, is refused (a
lone mutant is refused where the candidate passes a check the mutant is declared to fail).

Must not name: exponent_clamped, masked_with_finite_sentinel
"""
import torch


def softmax(x, axis=-1):
    x = x.masked_fill(torch.isneginf(x), torch.finfo(x.dtype).min)
    m = x.amax(dim=axis, keepdim=True)
    e = torch.exp(x - m)
    return e / e.sum(dim=axis, keepdim=True)
