"""Confuser: a textbook stable softmax (exp(x - max) / sum) run on x.float() and cast back, so a
float64 input is computed in float32: logits beyond float32's range become inf and the result NaN,
which looks like exp overflowing without a max shift, but the max shift is there. (It also gives NaN
for a slice that is entirely -inf, so no single mutant of the bank is this file.)

Must not name: no_max_subtraction, "exp overflowed", "subtract the maximum"
May name: float32_internals, computes_in_float32, nan_all_neg_inf, "entirely -inf gave NaN"
"""
import torch


def softmax(x: torch.Tensor, axis: int = -1) -> torch.Tensor:
    work = x.float()
    e = torch.exp(work - work.amax(dim=axis, keepdim=True).detach())
    return (e / e.sum(dim=axis, keepdim=True)).to(x.dtype)
