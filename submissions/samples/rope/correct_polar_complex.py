"""Correct: torch.polar and complex multiplication on (x[i], x[i + d/2]) pairs, back to real."""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"odd d={d}")
    real = torch.float64 if x.dtype == torch.float64 else torch.float32
    h = d // 2
    inv = base ** (-torch.arange(h, dtype=real) * 2 / d)
    pos = torch.tensor(positions) if isinstance(positions, list) else positions
    theta = pos.to(real)[:, None] * inv
    rot = torch.polar(torch.ones_like(theta), theta)
    z = torch.complex(x[..., :h].to(real), x[..., h:].to(real)) * rot
    return torch.cat([z.real, z.imag], dim=-1).to(x.dtype)
