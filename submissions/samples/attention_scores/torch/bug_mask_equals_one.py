"""Bug: only mask entries equal to 1 may attend (`mask == 1`), where the contract says nonzero / True
may attend; a 0/1 mask hides it, a mask of 0 / 3 (or 0.5, -2.0) does not.

Must fail: mask_numeric
Mistake: mask_equals_one
"""

import math

import torch


def compute_attention_scores(query, key, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is None:
        return torch.softmax(scores, dim=-1)
    keep = mask == 1
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights * keep.any(dim=-1, keepdim=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    weights = compute_attention_scores(query, key, mask)
    return weights @ value, weights
