"""Confuser: every tensor is float64; the angles are range-reduced with a typed TWO_PI = 6.283185 (7
digits, off by 3.1e-7 per period), so near position 10^6 the angle drifts by ~0.05 radians. The hint
said only 'computed in float32' (helper hunt); it must give typed constants as a cause too.

Must not name: "were computed in float32", "sin and cos were swapped"
May name: float32_angles, "only to the precision of float32 angles"
"""

import torch

TWO_PI = 6.283185


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    p = torch.arange(offset, offset + seq_len, dtype=torch.float64)
    inv = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    a = torch.remainder(p[:, None] * inv, TWO_PI)
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(a), torch.cos(a)
    return pe.float()
