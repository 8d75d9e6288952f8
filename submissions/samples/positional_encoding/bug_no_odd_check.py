"""Bug: an odd d_model is not rejected (the last column is silently dropped by the slicing).

Must fail: odd_d_model
Mistake: no_odd_check
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = np.arange(offset, offset + seq_len, dtype=np.float64)[:, None]
    freq = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(pos * freq)
    pe[:, 1::2] = np.cos(pos * freq)[:, : d_model // 2]
    return pe
