"""Bug: the cos/sin table is always built in float32 (as a float32 buffer cached once), also for float64 x.

Must fail: float64
Mistake: float32_table_for_float64
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float32) / d)
    theta = torch.as_tensor(positions).to(torch.float32)[:, None] * inv
    emb = torch.cat([theta, theta], -1)
    cos, sin = emb.cos().to(x.dtype), emb.sin().to(x.dtype)
    rot = torch.cat([-x[..., d // 2:], x[..., : d // 2]], -1)
    return x * cos + rot * sin
