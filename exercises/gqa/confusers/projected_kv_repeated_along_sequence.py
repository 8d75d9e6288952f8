"""Confuser: K and V are projected once, then the projected tensor is repeated along the sequence axis: the values
are the bank's kv_repeated_along_sequence's (x repeated before the projection), but the projection
work is not, and this file passes kv_flops, which that mutant fails. A lone mutant is now refused
where the candidate passes a complexity check the mutant is declared (and proven) to fail.

Must not name: kv_repeated_along_sequence
"""
import math

import torch
import torch.nn.functional as F


def grouped_query_attention(x, W_q, W_k, W_v, W_o, num_query_heads, num_kv_heads, mask=None):
    """Grouped-query self-attention over ``x``.

    Args:
        x: (B, L, D) tensor.
        W_q, W_o: (D, D) weights; W_k, W_v: (D, num_kv_heads * d_k) with d_k = D // num_query_heads.
        num_query_heads: H_q, must divide D.
        num_kv_heads: H_kv, must divide H_q.
        mask: None, or a bool/numeric tensor broadcastable to (B, H_q, L, L); nonzero / True
            means "may attend".

    Returns:
        (B, L, D) tensor in ``x``'s dtype, differentiable in ``x`` and every weight.

    Raises:
        ValueError: ``D % num_query_heads != 0`` or ``num_query_heads % num_kv_heads != 0``.
    """
    B, L, D = x.shape
    if num_query_heads <= 0 or D % num_query_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_query_heads={num_query_heads}")
    if num_kv_heads <= 0 or num_query_heads % num_kv_heads != 0:
        raise ValueError(f"num_query_heads={num_query_heads} is not divisible by num_kv_heads={num_kv_heads}")
    H_q, H_kv, d_k = num_query_heads, num_kv_heads, D // num_query_heads
    group = H_q // H_kv

    q = (x @ W_q).view(B, L, H_q, d_k).transpose(1, 2)   # (B, H_q, L, d_k)
    k = (x @ W_k).repeat(1, group, 1).view(B, L, H_q, d_k).transpose(1, 2)  # (B, H_kv, L, d_k) projected at H_kv heads
    v = (x @ W_v).repeat(1, group, 1).view(B, L, H_q, d_k).transpose(1, 2)  # (B, H_kv, L, d_k)

    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))  # (B, H_q, L, L)
    if mask is not None:
        keep = mask != 0                                      # broadcasts to (B, H_q, L, L)
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)  # (B, H_q, L, L) finite: no NaN
        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)  # (B, H_q, L, L) all-masked row -> 0
    else:
        att = F.softmax(att, dim=-1)                          # (B, H_q, L, L)
    y = att @ v                                               # (B, H_q, L, d_k)
    y = y.transpose(1, 2).contiguous().view(B, L, D)          # (B, L, D)
    return y @ W_o                                            # (B, L, D)
