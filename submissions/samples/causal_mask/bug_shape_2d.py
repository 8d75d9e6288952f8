"""Wrong: returns a (seq_len, kv_len) causal mask without the two leading axes.

Must fail: causal_square
Mistake: causal_mask_2d
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError('kv_len must be >= seq_len')
    return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)

def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1])[None, None] & create_padding_mask(seq, pad_token)
