"""Correct: torch.outer in float64, sin/cos stacked on a last axis and flattened to interleave."""
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model % 2 == 1 or seq_len < 0 or offset < 0:
        raise ValueError("invalid arguments")
    pos = torch.arange(seq_len, dtype=torch.float64) + offset
    freqs = torch.pow(torch.tensor(10000.0, dtype=torch.float64), -torch.arange(d_model // 2, dtype=torch.float64) * 2 / d_model)
    theta = torch.outer(pos, freqs)
    return torch.stack([theta.sin(), theta.cos()], dim=-1).flatten(1).to(torch.float32).reshape(seq_len, d_model)
