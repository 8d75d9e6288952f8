"""Correct: one query at a time. Query i (absolute position p = i + L_k - L_q) slices its window of
keys and values, keys lo..hi cut at the ends of the sequence, reads the mask at those keys from a
broadcast view, and takes a softmax over them; a row with nothing visible stays 0. Work and memory
per query are O(window * d).
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be a positive integer, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    half = query.dtype in (torch.float16, torch.bfloat16)
    q = query.float() if half else query
    k = key.float() if half else key
    v = value.float() if half else value
    full = None if mask is None else mask.expand(B, H, L_q, L_k)
    rows = []
    for i in range(L_q):
        p = i + L_k - L_q
        lo = max(p - window + 1, 0)
        hi = min(p + 1 if causal else p + window, L_k)
        if hi <= lo:
            rows.append(torch.zeros(B, H, v.shape[-1], dtype=v.dtype))
            continue
        s = torch.einsum("bhd,bhkd->bhk", q[:, :, i], k[:, :, lo:hi]) / math.sqrt(d_k)
        if full is not None:
            s = s.masked_fill(full[:, :, i, lo:hi] == 0, float("-inf"))
        top = s.amax(-1, keepdim=True)
        top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
        e = torch.exp(s - top)
        z = e.sum(-1, keepdim=True)
        w = e / torch.where(z == 0, torch.ones_like(z), z)
        rows.append(torch.einsum("bhk,bhkd->bhd", w, v[:, :, lo:hi]))
    return torch.stack(rows, dim=2).to(query.dtype)
