"""Wrong (PyTorch track): padding hides queries (B, 1, L, 1) instead of keys (B, 1, 1, L).

Must fail: padding_mask
Mistake: padding_on_query_axis"""

import torch


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be at least seq_len")
    ones = torch.ones(seq_len, kv_len, dtype=torch.bool)
    return torch.tril(ones, diagonal=kv_len - seq_len).view(1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token).unsqueeze(1).unsqueeze(3)


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
