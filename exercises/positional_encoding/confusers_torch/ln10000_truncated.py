"""Confuser (torch): angles in float64 throughout, but div_term uses a hand-typed ln(10000) = 9.21034
(true 9.2103403720): no error below position ~10^3, about 0.015 rad in the middle pairs near 10^6.
No float32 anywhere before the final cast.

Must not name: "computed in float32"
May name: float32_angles
"""
import torch

LN_10000 = 9.21034


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    p = torch.arange(offset, offset + seq_len, dtype=torch.float64)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-LN_10000 / d_model))
    angle = p[:, None] * div_term[None, :]
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(torch.float32)
