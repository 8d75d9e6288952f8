"""Correct (PyTorch track): masked_fill with -inf, torch.softmax, then torch.where to zero the fully
masked rows. The softmax of an all -inf row is NaN and so is its local gradient, but masked_fill's
backward zeroes the gradient of every filled position, so the gradients of query and key stay finite
(0 there): unlike an additive -inf bias, which passes the NaN on."""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        return torch.softmax(s, dim=-1)
    keep = mask.bool()
    s = s.masked_fill(~keep, float("-inf"))
    w = torch.softmax(s, dim=-1)
    return torch.where(keep.any(dim=-1, keepdim=True), w, torch.zeros_like(w))


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
