"""Wrong: ignores kv_len and always returns the square (seq_len, seq_len) triangle.

Must fail: causal_kv_len
Mistake: kv_len_ignored
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    if kv_len is not None and kv_len < seq_len:
        raise ValueError('kv_len must be >= seq_len')
    return np.tril(np.ones((seq_len, seq_len), dtype=bool))[None, None]

def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
