"""Confuser: builds sin and cos of the right angles (L, d/2) and interleaves them with
np.stack(..., axis=1).reshape(L, d): the stack axis is wrong (it should be -1), so each row is
[sin ... | cos ...]. No concatenation of halves was intended.

Its output is exactly the [sin | cos] halves layout, which the bank's concat_halves replays; that
sentence states the layout of the output, true here.

Must not name: transposed, sin_cos_swapped
May name: concat_halves
"""
import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    p = (offset + np.arange(seq_len, dtype=np.float64))[:, None]
    ang = p / np.power(10000.0, np.arange(0, d_model, 2, dtype=np.float64) / d_model)
    return np.stack([np.sin(ang), np.cos(ang)], axis=1).reshape(seq_len, d_model).astype(np.float32)
