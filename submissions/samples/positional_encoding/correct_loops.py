"""Correct: two Python loops with the math module (float64 scalars), as written on a whiteboard."""
import math

import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 != 0 or seq_len < 0 or offset < 0:
        raise ValueError(f"bad arguments: seq_len={seq_len}, d_model={d_model}, offset={offset}")
    pe = np.zeros((seq_len, d_model), dtype=np.float32)
    for r in range(seq_len):
        pos = offset + r
        for i in range(0, d_model, 2):
            angle = pos / (10000 ** (i / d_model))
            pe[r, i] = math.sin(angle)
            pe[r, i + 1] = math.cos(angle)
    return pe
