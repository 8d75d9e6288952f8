"""Confuser: with a mask, the output att @ v is computed one query row at a time: each row's pass
re-masks and re-normalises the whole (L_q, L_k) weight matrix, multiplies it by v and keeps one row, so with a mask the
work grows like seq_len^3. The scores q @ k^T are computed once, for all rows; the values are right.

The cost replay may name masked_scores_per_query_row: its sentence now leads with what the replay proves ("your measured cost equals, at the larger sizes, that of this mistake (a different structure of the same size costs the same)"), which is true of this file; a hand-written hint stating the mechanism as fact is not.

Must not name: "scores are built one query row at a time", full_projection_per_head
May name: masked_scores_per_query_row
"""
import math

import numpy as np


def _softmax_last(s):
    m = np.max(s, axis=-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(s.dtype)
    e = np.exp(s - m)
    t = np.sum(e, axis=-1, keepdims=True)
    return np.divide(e, t, out=np.zeros_like(e), where=t > 0)


def multi_head_attention(query, key, value, num_heads, W_q, W_k, W_v, W_o, mask=None):
    B, L_q, D = query.shape
    L_k = key.shape[1]
    if num_heads <= 0 or D % num_heads != 0:
        raise ValueError(f"d_model={D} is not divisible by num_heads={num_heads}")
    H, d_k = num_heads, D // num_heads
    q = (query @ W_q).reshape(B, L_q, H, d_k).transpose(0, 2, 1, 3)
    k = (key @ W_k).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)
    v = (value @ W_v).reshape(B, L_k, H, d_k).transpose(0, 2, 1, 3)
    att = q @ k.transpose(0, 1, 3, 2) / np.asarray(math.sqrt(d_k), dtype=query.dtype)
    if mask is not None:
        keep = np.asarray(mask) != 0
        att = _softmax_last(np.where(keep, att, -np.inf))
        rows = []
        for i in range(L_q):                                   # one output row at a time ...
            w = np.where(keep, att, 0).astype(att.dtype)
            w = w / np.maximum(w.sum(axis=-1, keepdims=True), 1e-30).astype(att.dtype)
            full = w @ v                                        # ... every row's output each time
            rows.append(full[..., i:i + 1, :])
        y = np.concatenate(rows, axis=-2)
    else:
        y = _softmax_last(att) @ v
    y = y.transpose(0, 2, 1, 3).reshape(B, L_q, D)
    return (y @ W_o).astype(query.dtype, copy=False)
