"""Confuser: rotate_half as x.roll(d/2) times a cached sign vector [-1]*h + [1]*h; the cache builds
the vector from ones and negates its first half in place on EVERY call, so the cached vector flips
between [-1, 1] (right) and [1, 1] (reflection) from one call with a given d to the next. The
rotation code itself has the minus sign.

Every call is right or rotate_half without its minus sign; a hand-written replay now needs every call
the variant would get wrong to be the variant's (a right call where the mistake would be wrong refuses
it), as the bank's same-function rule does.

Must not name: rotate_half_no_minus, "lost its minus sign"
"""
import torch

_SIGNS = {}


def _sign(d, dtype):
    s = _SIGNS.setdefault((d, dtype), torch.ones(d, dtype=dtype))
    s[: d // 2] *= -1          # meant to run once, when the vector is built
    return s


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("d must be even")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    h = d // 2
    pos = torch.as_tensor(positions).to(torch.float64)
    inv = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    theta = pos[:, None] * inv
    theta = torch.cat([theta, theta], dim=-1)
    c, s = torch.cos(theta).to(work), torch.sin(theta).to(work)
    xw = x.to(work)
    rot = torch.roll(xw, shifts=h, dims=-1) * _sign(d, work)
    return (xw * c + rot * s).to(x.dtype)
