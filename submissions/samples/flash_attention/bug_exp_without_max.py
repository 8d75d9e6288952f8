"""Wrong: blocks accumulate exp(s) and its row sum with no running max, so scores in the hundreds
overflow float32 (exp(100) = inf) and the output is inf / inf = NaN on rows that do see keys.

The NaN is not on a row that sees no key, so the "query row that sees no key" text must not be
shown; the bank's exp_without_max_shift names it. Every other check passes (small scores).

Must fail: large_scores
Mistake: exp_without_max_shift
"""

import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be >= 1")
    in_dtype = q.dtype
    work = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    q, k, v = q.to(work), k.to(work), v.to(work)
    L_q, L_k = q.shape[-2], k.shape[-2]
    rows = torch.arange(L_q)[:, None] + (L_k - L_q)
    l = torch.zeros(q.shape[:-1] + (1,), dtype=work)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=work)
    for s in range(0, L_k, block_size):
        sc = q @ k[..., s:s + block_size, :].transpose(-1, -2) / math.sqrt(q.shape[-1])
        if causal:
            sc = sc.masked_fill(torch.arange(s, s + sc.shape[-1])[None, :] > rows, float("-inf"))
        p = torch.exp(sc)
        l = l + p.sum(-1, keepdim=True)
        acc = acc + p @ v[..., s:s + block_size, :]
    return torch.where(l > 0, acc / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(acc)).to(in_dtype)
