"""Correct: masks filled row by row into np.zeros buffers (query i sees keys up to i + offset),
the combined mask built per sequence with the padding row repeated over queries."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be at least seq_len")
    mask = np.zeros((1, 1, seq_len, kv_len), dtype=bool)
    offset = kv_len - seq_len
    for i in range(seq_len):
        mask[0, 0, i, :i + offset + 1] = True
    return mask


def create_padding_mask(seq, pad_token=0):
    B, L = seq.shape
    mask = np.zeros((B, 1, 1, L), dtype=bool)
    for b in range(B):
        mask[b, 0, 0] = seq[b] != pad_token
    return mask


def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    causal = create_causal_mask(L)[0, 0]
    out = np.zeros((B, 1, L, L), dtype=bool)
    for b in range(B):
        keep = seq[b] != pad_token
        out[b, 0] = causal & keep[None, :]
    return out
