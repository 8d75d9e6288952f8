"""Wrong (PyTorch track): returns an additive float mask (0 where allowed, -inf where masked), the
convention of nn.Transformer, where a boolean "may attend" mask is asked.

Must fail: causal_square
Mistake: additive_mask
"""

import torch


def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len must be at least seq_len")
    allowed = torch.tril(torch.ones(seq_len, kv_len, dtype=torch.bool), diagonal=kv_len - seq_len)
    return torch.zeros(seq_len, kv_len).masked_fill(~allowed, float("-inf")).view(1, 1, seq_len, kv_len)


def create_padding_mask(seq, pad_token=0):
    return torch.zeros(seq.shape, dtype=torch.float32).masked_fill(seq == pad_token, float("-inf"))[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    return create_causal_mask(seq.shape[1]) + create_padding_mask(seq, pad_token)
