"""Correct (PyTorch track): int64 masks filled by Python loops over (query, key) and over tokens
(.tolist()), then expanded to the exact shapes with torch.tensor and [None] indexing."""
import torch


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be >= seq_len")
    off = kv_len - seq_len
    rows = [[1 if j <= i + off else 0 for j in range(kv_len)] for i in range(seq_len)]
    return torch.tensor(rows, dtype=torch.int64).reshape(seq_len, kv_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    rows = [[int(t != pad_token) for t in row] for row in seq.tolist()]
    return torch.tensor(rows, dtype=torch.int64).reshape(seq.shape[0], seq.shape[1])[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
