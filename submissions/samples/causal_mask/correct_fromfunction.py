"""Correct: np.fromfunction over index grids (j <= i + offset), padding with np.isin(invert=True),
combined with np.logical_and and reshaped to (B, 1, L, L)."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len ({kv_len}) must be >= seq_len ({seq_len})")
    off = kv_len - seq_len
    m = np.fromfunction(lambda i, j: j <= i + off, (seq_len, kv_len), dtype=int)
    return m.reshape(1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    keep = np.isin(seq, [pad_token], invert=True)
    return keep.reshape(seq.shape[0], 1, 1, seq.shape[1])


def create_combined_mask(seq, pad_token=0):
    L = np.asarray(seq).shape[1]
    return np.logical_and(create_causal_mask(L), create_padding_mask(seq, pad_token))
