"""Wrong: puts the padding on the query axis, (B, 1, L, 1), so padded keys stay visible.

Must fail: padding_mask
Mistake: padding_on_query_axis
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be >= seq_len")
    return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, :, None]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
