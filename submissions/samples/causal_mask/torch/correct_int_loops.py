"""Correct (PyTorch track): 0/1 int64 masks filled by Python loops."""

import torch


def create_causal_mask(seq_len, kv_len=None):
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len={kv_len} < seq_len={seq_len}")
    m = torch.zeros(1, 1, seq_len, kv_len, dtype=torch.int64)
    for i in range(seq_len):
        m[0, 0, i, : i + kv_len - seq_len + 1] = 1
    return m


def create_padding_mask(seq, pad_token=0):
    B, L = seq.shape
    m = torch.zeros(B, 1, 1, L, dtype=torch.int64)
    for b in range(B):
        for j in range(L):
            m[b, 0, 0, j] = int(seq[b, j].item() != pad_token)
    return m


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) * create_padding_mask(seq, pad_token)
