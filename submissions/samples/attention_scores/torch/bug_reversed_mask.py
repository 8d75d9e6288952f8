"""Wrong (PyTorch track): masks with the opposite polarity (True = masked out).

Must fail: mask_2d
Mistake: mask_polarity_inverted
"""

import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        s = s.masked_fill(mask != 0, torch.finfo(s.dtype).min)
        return torch.softmax(s, -1) * (mask == 0).any(-1, keepdim=True)
    return torch.softmax(s, -1)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
