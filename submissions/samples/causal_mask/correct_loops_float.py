"""Correct: explicit Python loops filling float64 0.0/1.0 masks (nonzero = may attend)."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len={kv_len} < seq_len={seq_len}")
    mask = np.zeros((1, 1, seq_len, kv_len))
    for i in range(seq_len):
        for j in range(kv_len):
            if j <= i + kv_len - seq_len:
                mask[0, 0, i, j] = 1.0
    return mask


def create_padding_mask(seq, pad_token=0):
    B, L = seq.shape
    mask = np.zeros((B, 1, 1, L))
    for b in range(B):
        for j in range(L):
            mask[b, 0, 0, j] = 0.0 if seq[b, j] == pad_token else 1.0
    return mask


def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    causal = create_causal_mask(L)
    padding = create_padding_mask(seq, pad_token)
    return causal * padding
