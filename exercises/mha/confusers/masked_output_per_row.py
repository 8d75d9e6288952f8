"""Confuser: with a mask, the output att @ v is computed one query row at a time, and each row's pass
re-normalises the whole (L_q, L_k) weight matrix over its kept keys, multiplies it by v and keeps
one row, so with a mask the work grows
like seq_len^3. The scores (q @ k^T) are computed once, for all rows; values are right.

The cost replay may name masked_scores_per_query_row: its sentence now leads with what the replay proves ("your measured cost equals, at the larger sizes, that of this mistake (a different structure of the same size costs the same)"), which is true of this file; a hand-written hint stating the mechanism as fact is not.

Must not name: "scores are built one query row at a time", full_projection_per_head
May name: masked_scores_per_query_row
"""
import math

import torch
import torch.nn.functional as F


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads
    q = (query @ W_q).view(B, L_q, H, d_k).transpose(1, 2)
    k = (key @ W_k).view(B, L_k, H, d_k).transpose(1, 2)
    v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d_k))
    if mask is not None:
        keep = mask != 0
        att = att.masked_fill(~keep, torch.finfo(att.dtype).min)
        att = torch.where(keep, F.softmax(att, dim=-1), 0.0)
        rows = []
        for i in range(L_q):                       # one output row at a time ...
            w = torch.where(keep, att, 0.0) * 1.0  # weights of the kept keys
            full = (w / w.sum(-1, keepdim=True).clamp_min(1e-30)) @ v  # ... all rows' outputs each time
            rows.append(full[..., i:i + 1, :])
        y = torch.cat(rows, dim=-2)
    else:
        att = F.softmax(att, dim=-1)
        y = att @ v
    y = y.transpose(1, 2).contiguous().view(B, L_q, D)
    return y @ W_o
