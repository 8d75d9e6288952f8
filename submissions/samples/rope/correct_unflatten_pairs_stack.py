"""Correct: the last axis unflattened to (2, d/2) so the two halves are a and b = x[..., 0, :], x[..., 1, :]; the rotated pair stacked back on that axis and flattened."""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.size(-1)
    if d % 2 == 1:
        raise ValueError("rope needs an even last dimension")
    work = torch.float64 if x.dtype is torch.float64 else torch.float32
    if not torch.is_tensor(positions):
        positions = torch.tensor(positions)
    p = positions.to(device=x.device, dtype=work).unsqueeze(-1)           # (L, 1)
    freqs = 1.0 / torch.pow(torch.tensor(base, dtype=work), torch.arange(0, d, 2, dtype=work) / d)
    th = p * freqs                                                       # (L, d/2)
    c, s = th.cos(), th.sin()
    pair = x.to(work).unflatten(-1, (2, d // 2))                         # (..., L, 2, d/2)
    a, b = pair.unbind(-2)
    out = torch.stack((a * c - b * s, b * c + a * s), dim=-2)
    return out.flatten(-2).to(x.dtype)
