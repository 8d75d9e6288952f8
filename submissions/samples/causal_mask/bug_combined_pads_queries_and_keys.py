"""Wrong: the combined mask ANDs causal with the padding of both keys and queries (pad rows zeroed
too: (B,1,L,1) & (B,1,1,L)): padded queries get all-False rows.

Must fail: combined_mask, hidden_masks
Mistake: combined_pads_both_axes
"""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    return np.tril(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    keep = seq != pad_token
    return create_causal_mask(seq.shape[1]) & keep[:, None, None, :] & keep[:, None, :, None]
