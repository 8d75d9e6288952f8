"""Correct (PyTorch track): masked_fill with the dtype's lowest value, torch.softmax, zero the fully
masked rows (finite everywhere, so gradients stay finite)."""

import math

import torch


def compute_attention_scores(query, key, mask=None):
    scores = query @ key.transpose(-2, -1) / math.sqrt(query.size(-1))
    if mask is None:
        return torch.softmax(scores, dim=-1)
    keep = mask.bool() if mask.dtype != torch.bool else mask
    scores = scores.masked_fill(~keep, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return weights * keep.any(dim=-1, keepdim=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    weights = compute_attention_scores(query, key, mask)
    return weights @ value, weights
