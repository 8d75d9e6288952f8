"""Correct (PyTorch track): leading dims broadcast and flattened to 3-D, scores by torch.baddbmm with
alpha=1/sqrt(d_k) onto an additive bias (0 where allowed, the dtype's lowest value where masked),
torch.softmax, then fully masked rows zeroed by multiplying with keep.any(-1)."""
import math

import torch


def compute_attention_scores(query, key, mask=None):
    lead = torch.broadcast_shapes(query.shape[:-2], key.shape[:-2])
    q = query.expand(*lead, *query.shape[-2:]).reshape(-1, *query.shape[-2:])
    k = key.expand(*lead, *key.shape[-2:]).reshape(-1, *key.shape[-2:])
    L_q, L_k = q.shape[1], k.shape[1]
    if mask is None:
        keep = torch.ones(*lead, L_q, L_k, dtype=torch.bool)
    else:
        keep = torch.broadcast_to(mask != 0, (*lead, L_q, L_k))
    bias = torch.zeros(keep.shape, dtype=q.dtype).masked_fill(~keep, torch.finfo(q.dtype).min)
    s = torch.baddbmm(bias.reshape(-1, L_q, L_k), q, k.transpose(1, 2), alpha=1.0 / math.sqrt(q.shape[-1]))
    w = torch.softmax(s, dim=-1).reshape(*lead, L_q, L_k)
    return w * keep.any(dim=-1, keepdim=True)


def scaled_dot_product_attention(query, key, value, mask=None):
    w = compute_attention_scores(query, key, mask)
    return torch.matmul(w, value), w
