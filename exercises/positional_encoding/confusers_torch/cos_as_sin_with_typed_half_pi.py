"""Confuser: the angles are float64, but the cos columns are sin(angle + 1.5707964) (pi/2 typed to
float32's digits) and the sin columns take the angle reduced modulo a typed 2*pi = 6.2831853: no float32
tensor anywhere, yet large positions drift as float32 angles do. The hint said only 'computed in
float32' (helper hunt); it must give typed constants as a cause too.

Must not name: "were computed in float32", "sin and cos were swapped"
May name: float32_angles, "only to the precision of float32 angles"
"""

import torch

HALF_PI = 1.5707964
TWO_PI = 6.2831853


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    p = torch.arange(offset, offset + seq_len, dtype=torch.float64)
    inv = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    a = torch.remainder(p[:, None] * inv, TWO_PI)
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(a)
    pe[:, 1::2] = torch.sin(a + HALF_PI)
    return pe.float()
