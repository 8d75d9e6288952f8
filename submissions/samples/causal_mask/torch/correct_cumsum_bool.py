"""Correct (PyTorch track): visibility as a cumulative count (a key j is visible to query i when
i + offset - j >= 0, computed with torch.sub on broadcast aranges and .ge(0)); padding mask by
torch.where producing uint8; combined with & on bool casts, then expand(...).clone()."""
import torch


def create_causal_mask(seq_len, kv_len=None):
    kv = seq_len if kv_len is None else kv_len
    if kv < seq_len:
        raise ValueError("kv_len shorter than seq_len")
    d = torch.sub(torch.arange(seq_len)[:, None] + (kv - seq_len), torch.arange(kv)[None, :])
    return d.ge(0)[None, None]


def create_padding_mask(seq, pad_token=0):
    one = torch.ones((), dtype=torch.uint8)
    return torch.where(seq == pad_token, one * 0, one)[:, None, None, :]


def create_combined_mask(seq, pad_token=0):
    B, L = seq.shape
    m = create_causal_mask(L) & create_padding_mask(seq, pad_token).bool()
    return m.expand(B, 1, L, L).clone()
