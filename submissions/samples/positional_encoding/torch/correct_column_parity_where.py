"""Correct: one angle per column (pair index col // 2), then torch.where on the column's parity picks sin or cos; float64 until the final cast."""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 != 0:
        raise ValueError("odd d_model")
    if seq_len < 0 or offset < 0:
        raise ValueError("negative seq_len or offset")
    col = torch.arange(d_model)
    pair = torch.div(col, 2, rounding_mode="floor").to(torch.float64)
    inv = 10000.0 ** (-(2.0 * pair) / d_model)
    p = torch.arange(offset, offset + seq_len, dtype=torch.float64).view(-1, 1)
    a = p * inv
    return torch.where(col % 2 == 0, a.sin(), a.cos()).to(dtype=torch.float32)
