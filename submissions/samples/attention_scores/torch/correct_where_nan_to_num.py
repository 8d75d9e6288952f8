"""Correct (PyTorch track): masked scores set to -inf by torch.where (not an addition), torch.softmax,
then torch.nan_to_num for fully masked rows: where's backward sends nothing to the masked scores, so
the NaN local gradient of an all -inf row never reaches query or key."""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        s = torch.where(mask != 0, s, torch.tensor(float("-inf"), dtype=s.dtype))
    return torch.nan_to_num(torch.softmax(s, dim=-1), nan=0.0)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
