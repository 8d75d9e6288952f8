"""Confuser: with kv_len given, the mask is built with its axes swapped, (1, 1, kv_len, seq_len): its
last axis has seq_len entries, like a mask that ignores kv_len, but kv_len is used (the mask is the
transpose of the right one); with kv_len == seq_len it is the upper triangle.

Must not name: "kv_len was ignored"
May name: causal_upper_triangle, "transposed", "upper triangle"
"""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if seq_len < 0 or kv_len < seq_len:
        raise ValueError("need 0 <= seq_len <= kv_len")
    allowed = np.arange(kv_len)[None, :] <= np.arange(seq_len)[:, None] + (kv_len - seq_len)
    return allowed.T[None, None, :, :]


def create_padding_mask(seq, pad_token=0):
    return (np.asarray(seq) != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    L = seq.shape[1]
    causal = np.tril(np.ones((L, L), dtype=bool))[None, None]
    return causal & create_padding_mask(seq, pad_token)
