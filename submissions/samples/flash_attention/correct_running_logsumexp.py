"""Correct: the online softmax kept as a running log-sum-exp (lse) with the accumulator normalised after every key block (acc * exp(lse_old - lse_new) + exp(s - lse_new) @ v); rows that see nothing stay 0."""
import math
import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if type(block_size) is not int or block_size < 1:
        raise ValueError("block_size must be an int >= 1")
    Lq, Lk = q.shape[-2], k.shape[-2]
    scale = 1.0 / math.sqrt(q.shape[-1])
    lse = torch.full(q.shape[:-1] + (1,), -math.inf, dtype=q.dtype)
    acc = q.new_zeros(q.shape[:-1] + (v.shape[-1],))
    qi = torch.arange(Lq).unsqueeze(-1) + (Lk - Lq)
    for j0 in range(0, Lk, block_size):
        s = torch.matmul(q, k[..., j0:j0 + block_size, :].transpose(-1, -2)) * scale
        if causal:
            kj = torch.arange(j0, j0 + s.shape[-1]).unsqueeze(0)
            s = s.masked_fill(kj > qi, -math.inf)
        blk = torch.logsumexp(s, dim=-1, keepdim=True)
        new = torch.logaddexp(lse, blk)
        safe = torch.where(torch.isinf(new), torch.zeros_like(new), new)
        acc = acc * torch.exp(lse - safe) + torch.exp(s - safe) @ v[..., j0:j0 + block_size, :]
        lse = new
    return acc
