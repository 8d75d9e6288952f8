"""Correct (PyTorch track): leading dims broadcast then flattened, one (L_q, L_k) matrix at a time
from unbind(0), masked_fill with -1e30 and the mask multiplied after softmax, results stacked."""
import math

import torch


def _one(q, k, keep):
    s = (q @ k.T) / math.sqrt(q.shape[-1])
    s = s.masked_fill(~keep, -1e30)
    return torch.softmax(s, dim=-1) * keep


def compute_attention_scores(query, key, mask=None):
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    shape = (*lead, query.shape[-2], key.shape[-2])
    keep = torch.ones(shape, dtype=torch.bool) if mask is None else torch.broadcast_to(mask != 0, shape)
    qs = query.expand(*lead, *query.shape[-2:]).reshape(-1, *query.shape[-2:]).unbind(0)
    ks = key.expand(*lead, *key.shape[-2:]).reshape(-1, *key.shape[-2:]).unbind(0)
    kp = keep.reshape(-1, *shape[-2:]).unbind(0)
    return torch.stack([_one(q, k, m) for q, k, m in zip(qs, ks, kp)]).reshape(shape)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return w @ value, w
