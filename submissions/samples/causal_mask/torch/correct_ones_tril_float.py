"""Correct (PyTorch track): float 0/1 masks: torch.ones(...).tril(diagonal=offset), padding as
(seq != pad).float(), combined by multiplication; all shapes via reshape."""
import torch


def create_causal_mask(seq_len, kv_len=None):
    if kv_len is None:
        kv_len = seq_len
    if kv_len < seq_len:
        raise ValueError(f"kv_len={kv_len} < seq_len={seq_len}")
    return torch.ones(seq_len, kv_len).tril(diagonal=kv_len - seq_len).reshape(1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    B, L = seq.shape
    return (seq != pad_token).float().reshape(B, 1, 1, L)


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) * create_padding_mask(seq, pad_token)
