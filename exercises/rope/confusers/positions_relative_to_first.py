"""Confuser: "RoPE only cares about relative positions", so the positions are taken relative to the
first one (positions - positions[0]) to keep the angles small. For a contiguous block T..T+L-1 that
is 0..L-1, the positions_restart output; for unsorted positions [9, 3, 3, 0, 12, 5] it is
[0, -6, -6, -9, 3, -4], not 0..5. The cause is subtracting positions[0], not ignoring positions.

Must not name: positions_restart
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    pos = torch.as_tensor(positions).to(torch.int64)
    pos = (pos - pos[0]).to(work)                                              # relative to the first row
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    theta = pos[:, None] * inv_freq
    emb = torch.cat([theta, theta], -1)
    xw = x.to(work)
    half = d // 2
    rot = torch.cat([-xw[..., half:], xw[..., :half]], -1)
    return (xw * emb.cos() + rot * emb.sin()).to(x.dtype)
