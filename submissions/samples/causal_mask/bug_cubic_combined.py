"""Wrong (complexity only): builds the combined mask from an (L, L, L) comparison of positions, so its
memory grows with the cube of the sequence length although the answer is right.

Must fail: memory_scaling
Mistake: cubic_position_comparison
"""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be >= seq_len")
    i = np.arange(seq_len)[:, None]
    j = np.arange(kv_len)[None, :]
    return (j <= i + (kv_len - seq_len))[None, None]


def create_padding_mask(seq, pad_token=0):
    return (np.asarray(seq) != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    L = seq.shape[1]
    pos = np.arange(L)
    # key j is visible from query i iff no position p with i < p <= j exists... computed the slow way
    between = (pos[None, None, :] > pos[:, None, None]) & (pos[None, None, :] <= pos[None, :, None])  # (L, L, L)
    causal = ~between.any(axis=-1)
    padding = seq[:, None, None, :] != pad_token
    return causal[None, None] & padding
