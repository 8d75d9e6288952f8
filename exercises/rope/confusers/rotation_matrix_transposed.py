"""Confuser: no rotate_half at all: each pair (x_i, x_{i+d/2}) is multiplied by a 2x2 rotation
matrix with einsum, but the einsum contracts the matrix's first index (R^T v instead of R v). The
result is the rotation by -theta, the output of rotate_half_sign, but the cause is a transposed
rotation matrix, not rotate_half returning [x2, -x1].

Must not name: "rotate_half([x1, x2]) is [-x2, x1], not [x2, -x1]"
May name: rotate_half_sign
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    half = d // 2
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv_freq            # (L, d/2)
    c, s = theta.cos(), theta.sin()
    R = torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)   # (L, d/2, 2, 2)
    xw = x.to(work)
    v = torch.stack([xw[..., :half], xw[..., half:]], -1)                     # (..., L, d/2, 2)
    y = torch.einsum("...lpji,...lpj->...lpi", R, v)                           # (..., L, d/2, 2)
    return torch.cat([y[..., 0], y[..., 1]], -1).to(x.dtype)
