"""Confuser (torch): the offset is added to the sin columns' angle only (forgotten in the cos line).

Must not name: offset_ignored
"""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    r = torch.arange(seq_len, dtype=torch.float64)
    inv = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin((offset + r)[:, None] * inv)
    pe[:, 1::2] = torch.cos(r[:, None] * inv)
    return pe.to(torch.float32)
