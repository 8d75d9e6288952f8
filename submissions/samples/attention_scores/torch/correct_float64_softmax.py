"""Correct (PyTorch track): scores in the input dtype, F.softmax(dtype=torch.float64) on a masked_fill
of -inf with the masked rows' scores replaced by 0 first (no NaN anywhere, even in gradients), cast
back, fully masked rows zeroed with torch.where."""
import math

import torch
import torch.nn.functional as F


def compute_attention_scores(query, key, mask=None):
    s = query.matmul(key.mT) * (1.0 / math.sqrt(query.size(-1)))
    if mask is None:
        return F.softmax(s, dim=-1, dtype=torch.float64).to(query.dtype)
    keep = torch.broadcast_to(mask != 0, torch.broadcast_shapes(s.shape, mask.shape))
    s = s.expand(keep.shape)
    alive = keep.any(dim=-1, keepdim=True)
    s = s.masked_fill(~keep & alive, float("-inf")).masked_fill(~alive, 0.0)
    w = F.softmax(s, dim=-1, dtype=torch.float64).to(query.dtype)
    return torch.where(alive, w, torch.zeros_like(w))


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
