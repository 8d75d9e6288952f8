"""Confuser: the base argument is ignored and the frequencies use a fixed base of 100 with the right
exponent, 100^(-2i/d), written as a loop over the pairs. For the default base 10000 that is
10000^(-i/d), the frequencies of the bank's freq_over_d (exponent -i/d); with base=500 it is neither.
The cause is a fixed base, not the exponent, so "base^(-i/d)" is not the name to give from the
default-base cases alone.

Must not name: freq_over_d, "base^(-i/d)"
May name: base_ignored
"""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    """Rotary position embedding, rotate_half layout (feature i pairs with i + d/2).

    Args:
        x: (..., L, d) array, d even.
        positions: L integer positions (a list or an integer array).
        base: the frequency base (ignored here: the mistake).

    Returns:
        (..., L, d) array in x's dtype.

    Raises:
        ValueError: d is odd.
    """
    x = np.asarray(x)
    L, d = x.shape[-2:]
    if d % 2:
        raise ValueError("d must be even")
    work = np.float64 if x.dtype == np.float64 else np.float32
    half = d // 2
    inv = np.empty(half, dtype=work)
    for i in range(half):
        inv[i] = 100.0 ** (-2.0 * i / d)
    theta = np.asarray(positions).astype(work)[:, None] * inv          # (L, d/2)
    c, s = np.cos(theta), np.sin(theta)
    xw = x.astype(work)
    x1, x2 = xw[..., :half], xw[..., half:]
    out = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], axis=-1)
    return out.astype(x.dtype)
