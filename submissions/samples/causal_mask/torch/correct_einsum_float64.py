"""Correct (PyTorch track): float64 0/1 masks, the combined mask as an einsum of the causal and padding factors."""
import torch
def create_causal_mask(seq_len, kv_len=None):
    kv_len = seq_len if kv_len is None else kv_len
    if kv_len < seq_len:
        raise ValueError("kv_len < seq_len")
    return torch.tril(torch.ones(seq_len, kv_len, dtype=torch.float64), kv_len - seq_len).unsqueeze(0).unsqueeze(0)
def create_padding_mask(seq, pad_token=0):
    return (seq != pad_token).to(torch.float64).unsqueeze(1).unsqueeze(1)
def create_combined_mask(seq, pad_token=0):
    L = seq.shape[1]
    c = torch.tril(torch.ones(L, L, dtype=torch.float64))
    p = (seq != pad_token).to(torch.float64)
    return torch.einsum('qk,bk->bqk', c, p).unsqueeze(1)
