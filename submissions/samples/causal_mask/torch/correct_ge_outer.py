"""Correct (PyTorch track): query positions (shifted by the cache) compared with key positions by
broadcasting torch.arange columns against rows; padding by seq.ne; combined with torch.logical_and."""
import torch


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    q = torch.arange(seq_len).unsqueeze(1) + (kv_len - seq_len)
    return (torch.arange(kv_len).unsqueeze(0) <= q).view(1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    return seq.ne(pad_token).unsqueeze(1).unsqueeze(2)


def create_combined_mask(seq, pad_token=0):
    return torch.logical_and(create_causal_mask(seq.shape[1]), create_padding_mask(seq, pad_token))
