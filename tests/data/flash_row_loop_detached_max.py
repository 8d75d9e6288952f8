"""Correct: one query row at a time (a Python loop over rows), keys and values in blocks of
block_size, the running max detached from autograd (the shift cancels in the gradient), float32
accumulators for half inputs. Slow in Python but linear in memory: on a loaded machine its
memory probe once ran past the 30 s step limit of wall-clock time (about 1 s of CPU), so its score
depended on the load until the step limit counted CPU time."""

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if block_size < 1:
        raise ValueError("block_size must be positive")
    *lead, Lq, d = q.shape
    Lk = k.shape[-2]
    wd = torch.float32 if q.dtype in (torch.float16, torch.bfloat16) else q.dtype
    sc = d ** -0.5
    rows = []
    for i in range(Lq):
        qi = q[..., i:i + 1, :].to(wd) * sc
        hi = Lk if not causal else max(0, min(Lk, i + Lk - Lq + 1))
        m = None; l = None; o = None
        for j0 in range(0, hi, block_size):
            j1 = min(j0 + block_size, hi)
            s = qi @ k[..., j0:j1, :].to(wd).transpose(-1, -2)
            bm = s.amax(-1, keepdim=True).detach()
            if m is None:
                m = bm; p = torch.exp(s - m)
                l = p.sum(-1, keepdim=True); o = p @ v[..., j0:j1, :].to(wd)
            else:
                mn = torch.maximum(m, bm)
                a = torch.exp(m - mn); p = torch.exp(s - mn)
                l = l * a + p.sum(-1, keepdim=True); o = o * a + p @ v[..., j0:j1, :].to(wd)
                m = mn
        if o is None:
            rows.append(torch.zeros(*lead, 1, v.shape[-1], dtype=wd))
        else:
            rows.append(o / l)
    if not rows:
        return torch.zeros(*lead, 0, v.shape[-1], dtype=q.dtype)
    return torch.cat(rows, -2).to(q.dtype)
