"""Wrong: the combined mask hides padded query rows instead of padded key columns.

Must fail: combined_mask, no_padding_leakage
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be >= seq_len")
    return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & (seq != pad_token)[:, None, :, None]
