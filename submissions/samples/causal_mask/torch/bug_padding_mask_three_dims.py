"""Wrong (PyTorch track): padding mask shaped (B, 1, L) (unsqueeze(1) once) instead of (B, 1, 1, L).

Must fail: padding_mask, padding_all_pad, no_padding_leakage
Mistake: padding_mask_three_dims
"""
import torch


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    return torch.ones(seq_len, kv_len, dtype=torch.bool).tril(kv_len - seq_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token).unsqueeze(1)


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token).unsqueeze(1)
