"""Correct: angles in float64, torch.polar gives cos + i sin, the (imag, real) pairs stacked on a last axis and reshaped to interleave, then cast."""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or d_model < 0 or seq_len < 0 or offset < 0:
        raise ValueError("d_model must be even and seq_len, offset non-negative")
    pos = torch.arange(seq_len, dtype=torch.float64) + offset
    freq = torch.pow(10000.0, -torch.arange(d_model // 2, dtype=torch.float64) * 2.0 / d_model)
    ang = pos.unsqueeze(1) * freq.unsqueeze(0)
    z = torch.polar(torch.ones_like(ang), ang)
    return torch.stack((z.imag, z.real), dim=-1).reshape(seq_len, d_model).float()
