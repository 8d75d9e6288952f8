"""Bug: writes the rotated halves back into x in place, under no_grad, and returns a copy of x (the
gradient reaching x skips the rotation).

Must fail: input_unchanged, grad_x
Mistake: rotated_in_place_gradient_cut
"""
import torch


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d % 2:
        raise ValueError("odd d")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=work) / d)
    theta = torch.as_tensor(positions).to(work)[:, None] * inv
    c, s = theta.cos().to(x.dtype), theta.sin().to(x.dtype)
    with torch.no_grad() if x.requires_grad else torch.enable_grad():
        x1, x2 = x[..., : d // 2].clone(), x[..., d // 2:].clone()
        x[..., : d // 2] = x1 * c - x2 * s
        x[..., d // 2:] = x2 * c + x1 * s
    return x.clone()
