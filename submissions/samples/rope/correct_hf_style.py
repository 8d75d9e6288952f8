"""Correct: the Hugging Face LLaMA way: float32 cos/sin cache cast to x's dtype, rotate_half in x's dtype."""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rope(x, positions, base=10000.0):
    dim = x.shape[-1]
    if dim % 2:
        raise ValueError("head dim must be even")
    dt = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).to(dt) / dim))
    position_ids = torch.as_tensor(positions).to(dt)
    freqs = position_ids[:, None] @ inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    return (x * cos) + (rotate_half(x) * sin)
