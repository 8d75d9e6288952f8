"""Bug: the softmax is computed in NumPy and wrapped back with torch.from_numpy, which cuts the autograd graph for the queries and keys.

Must fail: grad_inputs
Mistake: softmax_in_numpy
"""

import math

import numpy as np
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
    s = (q @ k.transpose(-2, -1) / math.sqrt(d_k)).detach().numpy()
    if mask is not None:
        s = np.where(mask.numpy() != 0, s, -np.inf)
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    att = torch.nan_to_num(torch.from_numpy(e / e.sum(axis=-1, keepdims=True)))  # a fully masked row: 0
    y = (att @ v).transpose(1, 2).reshape(B, L_q, D)
    return y @ W_o
