"""Correct: positions as Python ints, frequencies from a cached float64 table, result built row by row."""
import numpy as np

_CACHE = {}


def _freqs(d_model):
    if d_model not in _CACHE:
        _CACHE[d_model] = 10000.0 ** (-np.arange(0, d_model, 2) / d_model)
    return _CACHE[d_model]


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    rows = []
    for p in range(offset, offset + seq_len):
        a = p * _freqs(d_model)
        row = np.empty(d_model)
        row[::2], row[1::2] = np.sin(a), np.cos(a)
        rows.append(row)
    return np.array(rows, dtype=np.float32).reshape(seq_len, d_model)
