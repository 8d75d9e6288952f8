"""Correct: masks built from Python list comprehensions (seq.tolist()), bool arrays."""
import numpy as np
def create_causal_mask(seq_len, kv_len=None):
    kv_len = kv_len if kv_len is not None else seq_len
    if kv_len < seq_len:
        raise ValueError("kv_len must not be smaller than seq_len")
    rows = [[j <= i + kv_len - seq_len for j in range(kv_len)] for i in range(seq_len)]
    return np.array(rows, dtype=bool).reshape(1, 1, seq_len, kv_len)
def create_padding_mask(seq, pad_token=0):
    return np.array([[[[tok != pad_token for tok in row]]] for row in seq.tolist()], dtype=bool).reshape(len(seq), 1, 1, -1)
def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    return np.broadcast_to(create_causal_mask(L), (B, 1, L, L)) & create_padding_mask(seq, pad_token)
