"""Correct: key/value blocks taken with torch.split into lists and zipped; the running statistics kept per (batch, head) in an explicit Python loop over q.unbind; results stacked."""
import math
import torch


def _one(q, k, v, bs, causal):
    Lq, d = q.shape
    Lk = k.shape[0]
    m = torch.full((Lq, 1), -math.inf, dtype=q.dtype)
    l = torch.zeros(Lq, 1, dtype=q.dtype)
    acc = torch.zeros(Lq, v.shape[1], dtype=q.dtype)
    lim = torch.arange(Lq, dtype=torch.long).unsqueeze(1) + (Lk - Lq)
    start = 0
    for kb, vb in zip(torch.split(k, bs), torch.split(v, bs)):
        s = (q @ kb.T) / math.sqrt(d)
        if causal:
            j = torch.arange(start, start + kb.shape[0]).unsqueeze(0)
            s = s.masked_fill(j > lim, -math.inf)
        mb = torch.max(torch.cat([m, s], dim=1), dim=1, keepdim=True).values
        mb0 = torch.where(torch.isneginf(mb), 0.0, mb)
        p = (s - mb0).exp()
        a = (m - mb0).exp()
        l = a * l + p.sum(1, keepdim=True)
        acc = a * acc + p @ vb
        m = mb
        start += kb.shape[0]
    return torch.where(l > 0, acc / torch.where(l > 0, l, 1.0), 0.0)


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or block_size < 1:
        raise ValueError("block_size must be >= 1")
    return torch.stack([torch.stack([_one(qh, kh, vh, block_size, causal)
                                     for qh, kh, vh in zip(qb.unbind(0), kb.unbind(0), vb.unbind(0))])
                        for qb, kb, vb in zip(q.unbind(0), k.unbind(0), v.unbind(0))])
