"""Correct: np.tri(seq_len, kv_len, k=offset, dtype=bool), padding via np.expand_dims twice, and the
combined mask materialised with np.broadcast_to(...).copy() at exactly (B, 1, L, L)."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv = seq_len if kv_len is None else int(kv_len)
    if kv < seq_len:
        raise ValueError("kv_len must be at least seq_len")
    return np.tri(seq_len, kv, k=kv - seq_len, dtype=bool)[None, None, :, :]


def create_padding_mask(seq, pad_token=0):
    keep = seq != pad_token
    return np.expand_dims(np.expand_dims(keep, 1), 1)


def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    both = create_causal_mask(L) & create_padding_mask(seq, pad_token)
    return np.broadcast_to(both, (B, 1, L, L)).copy()
