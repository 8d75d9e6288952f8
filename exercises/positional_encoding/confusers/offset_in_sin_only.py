"""Confuser: the offset is added to the angle of the sin columns only; the cos line was written
with the bare row index (offset forgotten there). Half of the columns look like offset_ignored.

Must not name: offset_ignored
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    r = np.arange(seq_len, dtype=np.float64)
    inv = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    pe = np.empty((seq_len, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin((offset + r)[:, None] * inv)
    pe[:, 1::2] = np.cos(r[:, None] * inv)
    return pe.astype(np.float32)
