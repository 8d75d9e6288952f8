"""Confuser: the scores are scaled by 1/sqrt(k.size(-2)), the number of keys L_k, instead of
1/sqrt(k.size(-1)), the per-head width d_k (the wrong axis index). Where L_k equals the model width
D (8 keys at D = 8) that is the number 1/sqrt(D) gives, so that case looks like a wrong width; on
every other case with L_k != d_k it is neither the answer nor 1/sqrt(D). The cause is the axis, not
the width. (A check's hint is read from its first failed case, where L_k != D today, so nothing is
named; the confuser keeps it so if that changes.)

Must not name: scaled_by_sqrt_d_model, "1/sqrt(D)", "model width", logits_divided_by_d_k, "divided by d_k", "not scaled", unscaled
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

    att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-2))  # (B, H, L_q, L_k): the mistake, L_k for d_k
    if mask is not None:
        keep = mask != 0
        att = att.masked_fill(~keep, float("-inf"))
        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)  # (B, H, L_q, L_k) all-masked row -> 0
    else:
        att = F.softmax(att, dim=-1)                          # (B, H, L_q, L_k)
    y = att @ v                                               # (B, H, L_q, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)        # (B, L_q, D) heads side by side
    return y @ W_o                                            # (B, L_q, D)
