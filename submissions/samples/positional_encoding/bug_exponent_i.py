"""Bug: frequency 10000^(-i/d_model) for pair i instead of 10000^(-2i/d_model).

Must fail: values
Mistake: exponent_i
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = np.arange(offset, offset + seq_len, dtype=np.float64)[:, None]
    freq = 10000.0 ** (-np.arange(d_model // 2) / d_model)
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return pe
