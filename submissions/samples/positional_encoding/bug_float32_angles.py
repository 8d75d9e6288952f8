"""Bug: angles formed in float32; right at small positions, off by up to 0.03 near position 10^6.

Must fail: large_positions
Mistake: float32_angles
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = np.arange(offset, offset + seq_len, dtype=np.float32)[:, None]
    freq = np.power(np.float32(10000.0), -np.arange(0, d_model, 2, dtype=np.float32) / np.float32(d_model))
    angle = pos * freq
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe
