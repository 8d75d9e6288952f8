"""Wrong (PyTorch track): -inf fill then torch.softmax: a fully masked row is NaN.

Must fail: fully_masked_rows
Mistake: nan_fully_masked_rows
"""

import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    return torch.softmax(s, -1)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
