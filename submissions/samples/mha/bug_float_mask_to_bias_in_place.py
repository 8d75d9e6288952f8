"""Wrong (PyTorch track): a numeric mask is turned into an additive bias in place
(mask.masked_fill_(mask == 0, -inf), then the ones zeroed); the output and its gradients are right,
but the caller's mask is destroyed. Bool masks are left alone, so only a numeric-mask case sees it.

Mistake: float_mask_rewritten_in_place
Must fail: inputs_unchanged
"""
import math

import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if D % num_heads:
        raise ValueError("D % num_heads != 0")
    d_k = D // num_heads
    q = (query @ W_q).view(B, L_q, num_heads, d_k).transpose(1, 2)
    k = (key @ W_k).view(B, L_k, num_heads, d_k).transpose(1, 2)
    v = (value @ W_v).view(B, L_k, num_heads, d_k).transpose(1, 2)
    att = q @ k.transpose(-2, -1) / math.sqrt(d_k)
    if mask is not None:
        keep = mask != 0
        if mask.is_floating_point():
            mask.masked_fill_(~keep, float("-inf")).masked_fill_(keep, 0.0)
        att = att.masked_fill(~keep, float("-inf"))
        empty = ~keep.any(-1, keepdim=True)
        att = att.masked_fill(empty, 0.0)
        w = torch.softmax(att, dim=-1).masked_fill(empty, 0.0)
    else:
        w = torch.softmax(att, dim=-1)
    return (w @ v).transpose(1, 2).reshape(B, L_q, D) @ W_o
