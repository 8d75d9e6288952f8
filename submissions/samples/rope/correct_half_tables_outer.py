"""Correct: angles by torch.outer at d/2 width (never repeated), the two halves rotated separately (o1 = x1 c - x2 s, o2 = x2 c + x1 s) and concatenated."""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    wt = torch.float64 if x.dtype == torch.float64 else torch.float32
    pos = torch.as_tensor(positions).to(wt)
    half = d // 2
    inv = base ** (-torch.arange(half, dtype=wt) * 2 / d)
    ang = torch.outer(pos, inv)                  # (L, d/2)
    c, s = torch.cos(ang), torch.sin(ang)
    xw = x.to(wt)
    x1, x2 = xw[..., :half], xw[..., half:]
    return torch.cat((x1 * c - x2 * s, x2 * c + x1 * s), dim=-1).to(x.dtype)
