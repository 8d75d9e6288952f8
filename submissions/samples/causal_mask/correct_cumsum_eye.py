"""Correct: the causal mask as a cumulative sum of a shifted identity along the query axis (a key
becomes visible at its own step and stays visible), float32 0/1; padding as float32 too; combined by
a product."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    off = kv_len - seq_len
    start = np.zeros((seq_len, kv_len), dtype=np.float32)
    start[0, : off + 1] = 1.0                       # the first query sees the cache and itself
    for i in range(1, seq_len):
        start[i, off + i] = 1.0                     # each later query unlocks one more key
    return np.cumsum(start, axis=0).clip(0, 1)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (np.asarray(seq) != pad_token).astype(np.float32)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(np.asarray(seq).shape[1]) * create_padding_mask(seq, pad_token)
