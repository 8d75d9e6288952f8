"""Wrong (PyTorch track): query scaled in place (query.div_(sqrt(d_k))): modifies the caller's tensor,
and autograd refuses it on a leaf that requires grad.

Must fail: inputs_unchanged, gradients
Mistake: query_scaled_in_place
"""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    query.div_(math.sqrt(query.shape[-1]))
    s = query @ key.transpose(-2, -1)
    if mask is not None:
        keep = mask != 0
        s = s.masked_fill(~keep, torch.finfo(s.dtype).min)
        return torch.softmax(s, dim=-1) * keep.any(dim=-1, keepdim=True)
    return torch.softmax(s, dim=-1)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
