"""Wrong (PyTorch track): ids cast to uint8 before comparing ('masks are bytes'): ids above 255 or
negative pad tokens wrap around.

Must fail: padding_mask
Mistake: ids_cast_to_uint8
"""
import torch


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    return torch.ones(seq_len, kv_len, dtype=torch.bool).tril(kv_len - seq_len)[None, None]


def create_padding_mask(seq, pad_token=0):
    return (seq.to(torch.uint8) != (pad_token % 256))[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) & create_padding_mask(seq, pad_token)
