"""Correct: masked scores set to -inf with torch.where and fully masked rows (NaN after the softmax) replaced by torch.where again. Looks like the NaN-gradient trap but is not: where's backward selects (it never multiplies), so the NaN of an all -inf row never reaches the scores."""
import math
import torch


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, Lq, D = query.shape
    Lk = key.shape[1]
    if D % num_heads != 0:
        raise ValueError("num_heads must divide d_model")
    H, dk = num_heads, D // num_heads
    q = (query @ W_q).view(B, Lq, H, dk).transpose(1, 2)
    k = (key @ W_k).view(B, Lk, H, dk).transpose(1, 2)
    v = (value @ W_v).view(B, Lk, H, dk).transpose(1, 2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(dk)
    if mask is not None:
        keep = (mask != 0)
        scores = torch.where(keep, scores, float('-inf'))
        attn = torch.softmax(scores, dim=-1)
        attn = torch.where(keep.any(-1, keepdim=True), attn, 0.0)
    else:
        attn = torch.softmax(scores, dim=-1)
    y = (attn @ v).transpose(1, 2).reshape(B, Lq, D)
    return y @ W_o
