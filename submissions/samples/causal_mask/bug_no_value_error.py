"""Wrong: never validates kv_len; kv_len < seq_len silently returns a mask.

Must fail: kv_len_too_short
Mistake: no_value_error
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)[None, None]

def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
