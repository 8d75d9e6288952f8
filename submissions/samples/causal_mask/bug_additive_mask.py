"""Wrong: returns an additive mask (0 where allowed, -inf where masked), the opposite of the 'nonzero = may attend' convention.

Must fail: causal_square
Mistake: additive_causal_mask
"""
import numpy as np

def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError('kv_len must be >= seq_len')
    allowed = np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)
    return np.where(allowed, 0.0, -np.inf)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return (create_causal_mask(seq.shape[1]) == 0) & create_padding_mask(seq, pad_token)
