"""Correct: positions turned into a Python list of ints first; angle rows built in a list comprehension with math.cos/math.sin in double precision, stacked into tables; the rotation applied with an einsum over a 2x2 block per frequency."""
import math
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d is odd")
    if torch.is_tensor(positions):
        positions = positions.tolist()
    pos = [int(p) for p in positions]
    half = d // 2
    freqs = [base ** (-2.0 * i / d) for i in range(half)]
    wt = torch.float64 if x.dtype == torch.float64 else torch.float32
    cos = torch.tensor([[math.cos(p * f) for f in freqs] for p in pos], dtype=wt)   # (L, d/2)
    sin = torch.tensor([[math.sin(p * f) for f in freqs] for p in pos], dtype=wt)
    R = torch.stack([torch.stack([cos, -sin], -1), torch.stack([sin, cos], -1)], -2)  # (L, d/2, 2, 2)
    xw = x.to(wt)
    xp = torch.stack([xw[..., :half], xw[..., half:]], -1)                 # (..., L, d/2, 2)
    y = torch.einsum('lfij,...lfj->...lfi', R, xp)
    return torch.cat([y[..., 0], y[..., 1]], -1).to(x.dtype)
