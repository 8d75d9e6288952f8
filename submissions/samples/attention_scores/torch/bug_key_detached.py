"""Wrong (PyTorch track): key.detach() (to 'save memory'): no gradient flows to the key.

Must fail: gradients
Mistake: key_detached
"""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.detach().transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        keep = mask != 0
        s = s.masked_fill(~keep, torch.finfo(s.dtype).min)
        return torch.softmax(s, dim=-1) * keep.any(dim=-1, keepdim=True)
    return torch.softmax(s, dim=-1)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
