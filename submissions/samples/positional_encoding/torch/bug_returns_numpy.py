"""Bug: right values, but a NumPy array where the PyTorch track asks for a tensor.

Must fail: dtype_float32
Mistake: returns_numpy
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    pos = np.arange(offset, offset + seq_len, dtype=np.float64)[:, None]
    freq = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * freq), np.cos(pos * freq)
    return pe.astype(np.float32)
