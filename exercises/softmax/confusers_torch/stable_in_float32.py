"""Confuser: a stable softmax (the maximum is subtracted) that computes a float64 input in float32
and casts the result back to float64; logits beyond float32's range become inf there and the result
NaN, which looks like exp overflowing without a max shift, but the max shift is there.

Must not name: no_max_subtraction, "exp overflowed", "subtract the maximum"
May name: float32_internals, computes_in_float32
"""
import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    work = x.float() if x.dtype == torch.float64 else x
    m = torch.amax(work, dim=axis, keepdim=True).detach()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(work - m)
    s = e.sum(dim=axis, keepdim=True)
    out = e / torch.where(s > 0, s, torch.ones_like(s))
    return out.to(x.dtype)
