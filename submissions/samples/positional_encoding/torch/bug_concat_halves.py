"""Bug: torch.cat([sin, cos]) halves (tensor2tensor / MAE layout) instead of interleaving.

Must fail: values
Mistake: concat_halves
"""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 or seq_len < 0 or offset < 0:
        raise ValueError("bad arguments")
    pos = torch.arange(offset, offset + seq_len, dtype=torch.float64)[:, None]
    freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.cat([torch.sin(pos * freq), torch.cos(pos * freq)], dim=1).float()
