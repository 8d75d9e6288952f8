"""Confuser: built as (d_model, seq_len) and then reshaped (not transposed) to (seq_len, d_model):
right shape, scrambled values; for square cases (4, 4) it equals the transposed encoding.

Must not name: transposed, concat_halves
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    p = offset + np.arange(seq_len, dtype=np.float64)
    inv = np.power(10000.0, -np.arange(0, d_model, 2) / d_model)
    pe = np.empty((d_model, seq_len))
    pe[0::2] = np.sin(inv[:, None] * p[None, :])
    pe[1::2] = np.cos(inv[:, None] * p[None, :])
    return pe.reshape(seq_len, d_model).astype(np.float32)
