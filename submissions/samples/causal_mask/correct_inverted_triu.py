"""Correct: builds the 'blocked' upper triangle (torch style) and inverts it; uint8 padding mask."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    if kv_len is None:
        kv_len = seq_len
    elif kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    blocked = np.triu(np.ones((seq_len, kv_len), dtype=bool), k=kv_len - seq_len + 1)
    return np.expand_dims(~blocked, (0, 1))


def create_padding_mask(seq, pad_token=0):
    keep = np.not_equal(seq, pad_token).astype(np.uint8)
    return keep[:, np.newaxis, np.newaxis, :]


def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    causal = np.broadcast_to(create_causal_mask(L), (B, 1, L, L))
    return np.where(create_padding_mask(seq, pad_token).astype(bool), causal, False)
