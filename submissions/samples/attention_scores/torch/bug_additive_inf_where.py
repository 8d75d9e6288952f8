"""Wrong (PyTorch track): an additive bias of -inf at masked keys, torch.softmax, then torch.where to
zero the fully masked rows: the forward is right, but the NaN local gradient of an all -inf row flows
through the addition into query and key (nan_to_num-style cleanup after the softmax).

Must fail: gradients
Mistake: nan_gradient_fully_masked_rows
"""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is None:
        return torch.softmax(s, dim=-1)
    keep = mask != 0
    bias = torch.zeros(keep.shape, dtype=s.dtype).masked_fill(~keep, float("-inf"))
    w = torch.softmax(s + bias, dim=-1)
    return torch.where(keep.any(dim=-1, keepdim=True), w, torch.zeros_like(w))


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
