"""Confuser (torch): positions built as an int16 tensor (offset + arange) "to save memory": right up to
32767, wrapped past it (65536 -> 0, 999993 -> 16889 ...). Large positions are wrong by a wrap, not
by float32 angles, and small ones are right.

Must not name: float32_angles, offset_ignored
"""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    p = (torch.arange(seq_len, dtype=torch.int64) + offset).to(torch.int16).to(torch.float64)
    inv = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angle = p[:, None] * inv
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(torch.float32)
