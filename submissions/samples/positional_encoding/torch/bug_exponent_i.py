"""Bug: 10000^(-i/d_model) for pair i.

Must fail: values
Mistake: exponent_i
"""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    pos = torch.arange(offset, offset + seq_len, dtype=torch.float64)[:, None]
    freq = 10000.0 ** (-torch.arange(d_model // 2, dtype=torch.float64) / d_model)
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = torch.sin(pos * freq), torch.cos(pos * freq)
    return pe.float()
