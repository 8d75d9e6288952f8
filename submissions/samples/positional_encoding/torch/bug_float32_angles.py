"""Bug: the usual PyTorch tutorial code, angles in float32 (torch.arange(...).float()); wrong near 10^6.

Must fail: large_positions
Mistake: float32_angles
"""
import math

import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    position = torch.arange(offset, offset + seq_len).float().unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
