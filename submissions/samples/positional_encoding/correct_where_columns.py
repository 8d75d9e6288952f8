"""Correct: one angle per column (2*(j//2)), then np.where picks sin on even columns, cos on odd."""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if not d_model % 2 == 0:
        raise ValueError("odd d_model")
    if min(seq_len, offset) < 0:
        raise ValueError("negative")
    cols = np.arange(d_model)
    two_i = cols - cols % 2
    pos = np.arange(seq_len).astype(np.float64) + offset
    angles = pos[:, np.newaxis] / 10000.0 ** (two_i / d_model)
    return np.where(cols % 2 == 0, np.sin(angles), np.cos(angles)).astype("float32")
