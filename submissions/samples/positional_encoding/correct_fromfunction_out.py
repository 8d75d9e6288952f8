"""Correct: np.fromfunction for the angle grid, ufuncs writing into a float32 buffer with out=."""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 != 0 or seq_len < 0 or offset < 0:
        raise ValueError(f"invalid: seq_len={seq_len}, d_model={d_model}, offset={offset}")
    half = d_model // 2
    ang = np.fromfunction(lambda r, i: (r + offset) * 10000.0 ** (-(2.0 * i) / d_model),
                          (seq_len, half), dtype=np.float64)
    out = np.empty((seq_len, half, 2), dtype=np.float32)
    np.sin(ang, out=out[:, :, 0])
    np.cos(ang, out=out[:, :, 1])
    return out.reshape(seq_len, d_model)
