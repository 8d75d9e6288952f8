"""Wrong (PyTorch track): create_padding_mask overwrites the padded ids of seq in place
(masked_fill_); every mask it returns is right, so only seq_unchanged fails.

Must fail: seq_unchanged
Mistake: modifies_seq
"""
import torch
def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    return torch.ones(seq_len, kv_len, dtype=torch.bool).tril(kv_len - seq_len)[None, None]
def create_padding_mask(seq, pad_token=0):
    keep = seq != pad_token
    seq.masked_fill_(~keep, -1)
    return keep[:, None, None, :]
def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
