"""Confuser: on the masked path only, the scores are scaled by 1/sqrt(d_k) a second time (divided by
d_k); with num_heads == d_k (D = 16, 4 heads) that is the same number as 1/sqrt(D), the model width,
so the output looks like a wrong width, but the width is right and the scale is applied twice.

Must not name: scaled_by_sqrt_d_model, "1/sqrt(D)", "model width"
May name: logits_divided_by_d_k, "divided by d_k"
"""
import math

import torch
import torch.nn.functional as F


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    """Multi-head attention of ``query`` over ``key``/``value``.

    Args:
        query: (B, L_q, D) tensor.
        key, value: (B, L_k, D) tensors.
        num_heads: number of heads H; must divide D.
        W_q, W_k, W_v, W_o: (D, D) projection weights (``x @ W``).
        mask: None, or a bool/numeric tensor broadcastable to (B, H, L_q, L_k); nonzero / True
            means "may attend".

    Returns:
        (B, L_q, D) tensor in the inputs' dtype, differentiable in every input and weight.

    Raises:
        ValueError: ``D % num_heads != 0``.
    """
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads

    q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)  # (B, H, L_q, d_k)
    k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)    # (B, H, L_k, d_k)
    v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)  # (B, H, L_k, d_k)

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H, L_q, L_k)
    if mask is not None:
        keep = mask != 0
        att = att / math.sqrt(d_k)
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)  # (B, H, L_q, L_k) finite: no NaN
        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)  # (B, H, L_q, L_k) all-masked row -> 0
    else:
        att = F.softmax(att, dim=-1)                          # (B, H, L_q, L_k)
    y = att @ v                                               # (B, H, L_q, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)        # (B, L_q, D) heads side by side
    return y @ W_o                                            # (B, L_q, D)
