"""Bug: the GPT-J / Meta LLaMA interleaved-pair layout (features 2i and 2i+1 together), not rotate_half.

Must fail: values
Mistake: interleaved_pairs
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv
    xc = torch.view_as_complex(x.to(work).reshape(*x.shape[:-1], d // 2, 2).contiguous())
    out = torch.view_as_real(xc * torch.polar(torch.ones_like(theta), theta)).flatten(-2)
    return out.to(x.dtype)
