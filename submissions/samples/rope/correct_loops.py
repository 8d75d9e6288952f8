"""Correct: a loop over the d/2 pairs, each rotated by its own angle with torch.stack, no cat of a table."""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2 == 1:
        raise ValueError("apply_rope needs an even last dimension")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    xw = x.to(work)
    pos = torch.as_tensor(positions).to(work)
    h = d // 2
    first, second = [], []
    for i in range(h):
        ang = pos * (1.0 / base ** (2 * i / d))
        c, s = torch.cos(ang)[:, None], torch.sin(ang)[:, None]
        a, b = xw[..., i:i + 1], xw[..., i + h:i + h + 1]
        first.append(a * c - b * s)
        second.append(b * c + a * s)
    return torch.cat(first + second, dim=-1).to(x.dtype)
