"""Wrong: returns the torch-style 'blocked' upper triangle (True = masked), the opposite polarity.

Must fail: causal_square, no_future_leakage
Mistake: causal_polarity_inverted
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError('kv_len must be >= seq_len')
    return np.triu(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len + 1)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return ~create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
