"""Correct: sin and cos stacked on a new last axis, then reshaped so the pairs interleave."""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 == 1:
        raise ValueError("odd d_model")
    if min(seq_len, offset) < 0:
        raise ValueError("negative seq_len or offset")
    positions = (np.arange(seq_len) + offset)[:, None].astype(np.float64)
    freqs = 1.0 / np.power(10000.0, np.arange(d_model // 2) * 2.0 / d_model)
    theta = positions * freqs[None, :]
    return np.stack([np.sin(theta), np.cos(theta)], axis=-1).reshape(seq_len, d_model).astype(np.float32)
