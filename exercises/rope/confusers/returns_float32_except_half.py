"""Confuser: the rotation is right and float64 inputs are rotated in float64 throughout, but the
result is returned as float32 for every input except float16/bfloat16 (cast back): float64 in,
float32 out. The values of float64 cases are float32-rounded by the final cast, not by a float32
angle table.

Must not name: float32_table_for_float64, "float32 angle table"
May name: not_cast_back
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv_freq
    emb = torch.cat([theta, theta], -1)
    xw = x.to(work)
    half = d // 2
    rot = torch.cat([-xw[..., half:], xw[..., :half]], -1)
    out = xw * emb.cos() + rot * emb.sin()
    out_dtype = x.dtype if x.dtype in (torch.float16, torch.bfloat16) else torch.float32
    return out.to(out_dtype)
