"""Confuser: angles, cos/sin and products are all computed in x's working dtype (float64 for float64
input), but the two halves are written into an output buffer allocated as float32 (meant for the
half-precision path), then cast to x's dtype. The float64 table is right; the result is rounded to
float32 once at the end.

Must not name: float32_table_for_float64, "float32 angle table"
May name: float32_internals
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    half = d // 2
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / base ** (torch.arange(half, dtype=work) * 2 / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv_freq            # (L, d/2)
    c, s = theta.cos(), theta.sin()
    x1, x2 = x[..., :half].to(work), x[..., half:].to(work)
    out = torch.empty(x.shape, dtype=torch.float32)                           # working buffer
    out[..., :half] = x1 * c - x2 * s
    out[..., half:] = x2 * c + x1 * s
    return out.to(x.dtype)
