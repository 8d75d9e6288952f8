"""Confuser: the base argument is ignored and the frequencies use a fixed base of 100 with the right
exponent, 100^(-2i/d). For the default base 10000 that is 10000^(-i/d), the frequencies of the bank's
freq_over_d (exponent -i/d); with base=500 it is neither. The cause is a fixed base, not the exponent,
so "base^(-i/d)" is not the name to give from the default-base cases alone.

Must not name: freq_over_d, "base^(-i/d)"
May name: base_ignored
"""
import torch


def apply_rope(x, positions, base=10000.0):
    """Rotary position embedding, rotate_half layout (feature i pairs with i + d/2).

    Args:
        x: (..., L, d) tensor, d even.
        positions: L integer positions (a list or an integer tensor).
        base: the frequency base (ignored here: the mistake).

    Returns:
        (..., L, d) tensor in x's dtype.

    Raises:
        ValueError: d is odd.
    """
    L, d = x.shape[-2:]
    if d % 2:
        raise ValueError("d odd")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = torch.pow(torch.tensor(100.0, dtype=work), -torch.arange(0, d, 2, dtype=work) / d)   # (d/2,)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv                                  # (L, d/2)
    c, s = torch.cos(theta), torch.sin(theta)
    xw = x.to(work)
    x1, x2 = xw[..., : d // 2], xw[..., d // 2:]
    out = torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], dim=-1)
    return out.to(x.dtype)
