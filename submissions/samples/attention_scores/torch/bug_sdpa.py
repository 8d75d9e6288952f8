"""Wrong (PyTorch track): calls F.scaled_dot_product_attention, which the exercise forbids.

Must fail: output_basic
Mistake: forbidden_api
"""

import math

import torch
import torch.nn.functional as F


def compute_attention_scores(query, key, mask=None):
    s = query @ key.transpose(-2, -1) / math.sqrt(query.shape[-1])
    if mask is not None:
        s = s.masked_fill(mask == 0, float("-inf"))
    return torch.nan_to_num(torch.softmax(s, -1))


def scaled_dot_product_attention(query, key, value, mask=None):
    out = F.scaled_dot_product_attention(query, key, value, attn_mask=None if mask is None else mask.bool())
    return out, compute_attention_scores(query, key, mask)
