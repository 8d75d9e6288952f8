"""Bug: each column j uses 10000^(-j/d_model), so a pair's cos has another frequency than its sin.

Must fail: values
Mistake: column_exponent
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = np.arange(offset, offset + seq_len, dtype=np.float64)[:, None]
    j = np.arange(d_model)[None, :]
    angle = pos / 10000.0 ** (j / d_model)
    return np.where(j % 2 == 0, np.sin(angle), np.cos(angle)).astype(np.float32)
