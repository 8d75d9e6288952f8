"""a NumPy array was returned where the PyTorch track asks for a torch.Tensor (convert with torch.from_numpy, or compute with torch).

Must fail: dtype_float32
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2 != 0 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    p = offset + np.arange(seq_len, dtype=np.float64)
    inv_freq = np.power(10000.0, -np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    angle = p[:, None] * inv_freq[None, :]
    pe = np.empty((seq_len, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle)
    return pe.astype(np.float32)
