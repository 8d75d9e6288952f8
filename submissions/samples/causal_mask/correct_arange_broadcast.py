"""Correct: masks from np.arange comparisons broadcast with np.newaxis (no (L, L) ones matrix),
padding as np.not_equal, combined with np.logical_and."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len={kv_len} is shorter than seq_len={seq_len}")
    q = np.arange(seq_len)[:, np.newaxis]
    k = np.arange(kv_len)[np.newaxis, :]
    return (k <= q + (kv_len - seq_len))[np.newaxis, np.newaxis]


def create_padding_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    return np.not_equal(seq, pad_token)[:, np.newaxis, np.newaxis, :]


def create_combined_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    return np.logical_and(create_causal_mask(seq.shape[1]), create_padding_mask(seq, pad_token))
