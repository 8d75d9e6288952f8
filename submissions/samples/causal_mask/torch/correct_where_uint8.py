"""Correct (PyTorch track): uint8 0/1 masks from torch.where on position differences."""
import torch
def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    d = torch.arange(kv_len)[None, :] - torch.arange(seq_len)[:, None]
    return torch.where(d <= kv_len - seq_len, 1, 0).to(torch.uint8)[None, None]
def create_padding_mask(seq, pad_token=0):
    return torch.where(seq == pad_token, 0, 1).to(torch.uint8).view(seq.shape[0], 1, 1, seq.shape[1])
def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
