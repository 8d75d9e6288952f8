"""Correct: np.greater_equal.outer of query positions (shifted by the cache) and key positions,
padding by np.not_equal, the combined mask by np.minimum on uint8 0/1 factors."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    rows = np.arange(seq_len) + (kv_len - seq_len)
    return np.greater_equal.outer(rows, np.arange(kv_len))[np.newaxis, np.newaxis]


def create_padding_mask(seq, pad_token=0):
    return np.not_equal(seq, pad_token)[:, np.newaxis, np.newaxis, :]


def create_combined_mask(seq, pad_token=0):
    causal = create_causal_mask(seq.shape[1]).astype(np.uint8)
    pad = create_padding_mask(seq, pad_token).astype(np.uint8)
    return np.minimum(causal, pad)
