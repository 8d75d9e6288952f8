"""Correct: a row loop filling a bool matrix, np.expand_dims, and the combined mask as an einsum of int32 causal and padding factors."""
import numpy as np
def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    m = np.zeros((seq_len, kv_len), dtype=bool)
    for i in range(seq_len):
        m[i, : i + kv_len - seq_len + 1] = True
    return np.expand_dims(m, (0, 1))
def create_padding_mask(seq, pad_token=0):
    keep = seq != pad_token
    return np.expand_dims(keep, (1, 2))
def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    keep = (seq != pad_token).astype(np.int32)
    caus = create_causal_mask(L)[0, 0].astype(np.int32)
    return np.einsum('qk,bk->bqk', caus, keep).astype(bool)[:, None]
