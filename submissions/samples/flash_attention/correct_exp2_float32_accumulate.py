"""Correct: FlashAttention's exp2 trick (scores pre-multiplied by log2(e)/sqrt(d), exp2 everywhere), half inputs accumulated in float32 and cast back, the causal mask built per block with torch.tril of an offset ones matrix."""
import math
import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    if not isinstance(block_size, int) or isinstance(block_size, bool) or block_size <= 0:
        raise ValueError("block_size must be a positive int")
    dt = q.dtype
    acc_t = torch.float32 if dt in (torch.float16, torch.bfloat16) else dt
    q, k, v = q.to(acc_t), k.to(acc_t), v.to(acc_t)
    Lq, Lk = q.shape[-2], k.shape[-2]
    c = math.log2(math.e) / math.sqrt(q.shape[-1])
    qs = q * c
    m = torch.full((*q.shape[:-1], 1), float('-inf'), dtype=acc_t)
    l = torch.zeros((*q.shape[:-1], 1), dtype=acc_t)
    o = torch.zeros((*q.shape[:-1], v.shape[-1]), dtype=acc_t)
    for s0 in range(0, Lk, block_size):
        kb, vb = k[..., s0:s0 + block_size, :], v[..., s0:s0 + block_size, :]
        s = qs @ kb.transpose(-2, -1)
        if causal:
            allowed = torch.ones(Lq, kb.shape[-2], dtype=torch.bool).tril(diagonal=Lk - Lq - s0)
            s = s.masked_fill(~allowed, float('-inf'))
        mn = torch.maximum(m, s.amax(-1, keepdim=True))
        ms = torch.where(mn == float('-inf'), torch.zeros_like(mn), mn)
        p = torch.exp2(s - ms)
        corr = torch.exp2(m - ms)
        l = l * corr + p.sum(-1, keepdim=True)
        o = o * corr + p @ vb
        m = mn
    out = torch.where(l > 0, o / torch.where(l > 0, l, torch.ones_like(l)), torch.zeros_like(o))
    return out.to(dt)
