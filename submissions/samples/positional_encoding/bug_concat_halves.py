"""Bug: [sin | cos] halves (the tensor2tensor / MAE layout) where the interleaved layout is asked.

Must fail: values
Mistake: concat_halves
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = np.arange(offset, offset + seq_len, dtype=np.float64)[:, None]
    freq = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    return np.concatenate([np.sin(pos * freq), np.cos(pos * freq)], axis=1).astype(np.float32)
