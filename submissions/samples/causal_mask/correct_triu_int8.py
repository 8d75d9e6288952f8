"""Correct: the future marked with np.triu of int8 ones (offset kv_len - seq_len + 1), inverted to
bool; padding with a comparison then np.expand_dims; combined by multiplication cast to bool."""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else int(kv_len)
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    future = np.triu(np.ones((seq_len, kv_len), dtype=np.int8), k=kv_len - seq_len + 1)
    return (future == 0).reshape(1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    return np.expand_dims(np.asarray(seq) != pad_token, axis=(1, 2))


def create_combined_mask(seq, pad_token=0):
    L = np.shape(seq)[1]
    both = create_causal_mask(L).astype(np.int8) * create_padding_mask(seq, pad_token).astype(np.int8)
    return both.astype(bool)
