"""Wrong (PyTorch track): exponent clamped at -80 'for stability': -inf entries get exp(-80) > 0
instead of exactly 0, and an all -inf slice becomes uniform.

Must fail: neg_inf_entries, all_neg_inf
Mistake: exponent_clamped
"""
import torch


def softmax(x, axis=-1):
    m = x.amax(dim=axis, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(torch.clamp(x - m, min=-80.0))
    return e / e.sum(dim=axis, keepdim=True)
