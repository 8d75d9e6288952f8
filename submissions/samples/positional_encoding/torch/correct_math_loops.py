"""Correct: Python loops with the math module, then one torch.tensor of float32."""
import math

import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 != 0:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be non-negative")
    rows = []
    for pos in range(offset, offset + seq_len):
        row = []
        for i in range(d_model // 2):
            a = pos / 10000 ** (2 * i / d_model)
            row += [math.sin(a), math.cos(a)]
        rows.append(row)
    return torch.tensor(rows, dtype=torch.float32).reshape(seq_len, d_model)
