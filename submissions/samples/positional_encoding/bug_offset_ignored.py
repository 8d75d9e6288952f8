"""Bug: the offset is validated but ignored: rows always encode positions 0 .. seq_len-1.

Must fail: offset
Mistake: offset_ignored
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = np.arange(seq_len, dtype=np.float64)[:, None]
    freq = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)
    return pe
