"""Correct: index comparisons with arange, int8 0/1 masks, np.logical_and then astype."""
import numpy as np


def create_causal_mask(seq_len: int, kv_len=None) -> np.ndarray:
    kv = seq_len if kv_len is None else int(kv_len)
    if kv < seq_len:
        raise ValueError("kv_len cannot be smaller than seq_len")
    rows = np.arange(kv - seq_len, kv).reshape(-1, 1)     # absolute position of each query
    cols = np.arange(kv).reshape(1, -1)
    return (cols <= rows).astype(np.int8).reshape(1, 1, seq_len, kv)


def create_padding_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    seq = np.asarray(seq)
    return np.where(seq == pad_token, 0, 1).astype(np.int8).reshape(seq.shape[0], 1, 1, seq.shape[1])


def create_combined_mask(seq: np.ndarray, pad_token: int = 0) -> np.ndarray:
    L = np.asarray(seq).shape[1]
    both = np.logical_and(create_causal_mask(L) != 0, create_padding_mask(seq, pad_token) != 0)
    return both.astype(np.int8)
