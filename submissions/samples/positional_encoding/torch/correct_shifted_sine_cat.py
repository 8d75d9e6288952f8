"""Correct: cos written as a sine shifted by pi/2; a phase vector [0, pi/2, 0, pi/2, ...] added to angles repeated per column, one torch.sin over the whole table in float64."""
import math
import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if seq_len < 0:
        raise ValueError("seq_len < 0")
    if offset < 0:
        raise ValueError("offset < 0")
    if d_model % 2 == 1:
        raise ValueError("d_model is odd")
    i = torch.arange(0, d_model, 2, dtype=torch.float64)
    freq = torch.exp(-math.log(10000.0) * i / d_model).repeat_interleave(2)       # (d,)
    phase = torch.tensor([0.0, math.pi / 2], dtype=torch.float64).repeat(d_model // 2)
    pos = torch.arange(seq_len, dtype=torch.float64).add_(offset)[:, None]
    return torch.sin(pos * freq + phase).to(torch.float32)
