"""Correct: computed in NumPy float64 with slice assignment, returned through torch.from_numpy after astype(float32)."""
import numpy as np
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    seq_len, d_model, offset = int(seq_len), int(d_model), int(offset)
    if d_model & 1:
        raise ValueError(f"d_model must be even, got {d_model}")
    if min(seq_len, offset) < 0:
        raise ValueError("seq_len and offset must be >= 0")
    pe = np.zeros((seq_len, d_model), dtype=np.float64)
    position = np.arange(offset, offset + seq_len, dtype=np.float64)[:, np.newaxis]
    div_term = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * -(np.log(10000.0) / d_model))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    return torch.from_numpy(pe.astype(np.float32))
