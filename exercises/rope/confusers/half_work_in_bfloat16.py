"""Confuser: the angle table and cos/sin are float32 for half inputs (right), but the half-precision
path first casts x to bfloat16 ("the half dtype") before the float32 rotation, so float16 inputs
lose 3 mantissa bits; bfloat16 inputs are untouched. A wrong cast of x, not half-precision angles
or positions.

Must not name: float16_internals, positions_in_half_precision, inv_freq_in_half_precision
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    half_in = x.dtype in (torch.float16, torch.bfloat16)
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv_freq
    emb = torch.cat([theta, theta], -1)
    xw = (x.to(torch.bfloat16) if half_in else x).to(work)
    h = d // 2
    rot = torch.cat([-xw[..., h:], xw[..., :h]], -1)
    return (xw * emb.cos() + rot * emb.sin()).to(x.dtype)
