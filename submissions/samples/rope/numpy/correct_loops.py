"""Correct: loops over rows and pairs with the math module (float64 scalars), written into a copy."""
import math

import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2 == 1:
        raise ValueError("d must be even")
    h = d // 2
    src = x.astype(np.float64)
    out = np.empty_like(src)
    for r, p in enumerate(list(positions)):
        for i in range(h):
            a = int(p) / base ** (2 * i / d)
            c, s = math.cos(a), math.sin(a)
            x1, x2 = src[..., r, i], src[..., r, i + h]
            out[..., r, i] = x1 * c - x2 * s
            out[..., r, i + h] = x2 * c + x1 * s
    return out.astype(x.dtype)
