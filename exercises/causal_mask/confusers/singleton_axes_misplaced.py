"""Confuser: the causal mask keeps its two singleton axes but puts them between the query and key
axes, (seq_len, 1, 1, kv_len) (``allowed[:, None, None, :]``, the padding mask's indexing copied):
its values, read in order, are the right mask and it squeezes to the right (seq_len, kv_len), like a
mask whose singleton axes were dropped, but none was dropped: they are in the wrong places, and
against scores (B, H, L_q, L_k) it broadcasts to another shape.

Must not name: "keep the singleton axes"
"""
import numpy as np


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if seq_len < 0 or kv_len < seq_len:
        raise ValueError("need 0 <= seq_len <= kv_len")
    allowed = np.arange(kv_len)[None, :] <= np.arange(seq_len)[:, None] + (kv_len - seq_len)
    return allowed[:, None, None, :]


def create_padding_mask(seq, pad_token=0):
    return (np.asarray(seq) != pad_token)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    seq = np.asarray(seq)
    L = seq.shape[1]
    causal = np.tril(np.ones((L, L), dtype=bool))[None, None]
    return causal & create_padding_mask(seq, pad_token)
