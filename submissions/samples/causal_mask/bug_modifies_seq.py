"""Wrong: overwrites seq in place (ids to 0/1) to build the mask; the mask itself is right, so only
seq_unchanged fails.

Must fail: seq_unchanged
Mistake: modifies_seq
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be >= seq_len")
    return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    keep = seq != pad_token
    seq[...] = keep
    return seq.astype(bool)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & (seq != pad_token)[:, None, None, :]
