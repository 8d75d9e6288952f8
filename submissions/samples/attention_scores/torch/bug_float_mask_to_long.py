"""Wrong (PyTorch track): a float mask converted with .long() before comparing with 0: 0.5 truncates to 0
and masks a key that may attend (any nonzero value may attend).

Must fail: mask_numeric
Mistake: mask_truncated_to_integer
"""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        keep = mask.long() != 0
        s = s.masked_fill(~keep, torch.finfo(s.dtype).min)
        return torch.softmax(s, dim=-1) * keep.any(dim=-1, keepdim=True)
    return torch.softmax(s, dim=-1)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
