"""Correct: i*exp(-i*angle) = sin + i cos, viewed as interleaved float64 pairs."""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 == 1:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    freqs = 1.0 / np.power(10000.0, np.arange(d_model // 2) * 2.0 / d_model)
    ang = np.multiply.outer(np.arange(seq_len, dtype=np.int64) + offset, freqs)
    z = 1j * np.exp(-1j * ang)
    return np.ascontiguousarray(z).view(np.float64).reshape(seq_len, d_model).astype(np.float32)
