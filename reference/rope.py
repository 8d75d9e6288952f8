"""Reference solution: rotary position embedding, RoPE (PyTorch).

Su et al., *RoFormer* (2021), in the "rotate_half" layout of GPT-NeoX and of LLaMA in Hugging Face
``transformers`` (``modeling_llama.apply_rotary_pos_emb``): feature ``j < d/2`` is paired with
feature ``j + d/2`` and the pair is rotated by ``theta = position * base^(-2j/d)``. The angle table
is built at the input's precision (float64 for float64 input, float32 otherwise, as Hugging Face
builds it in float32); float16/bfloat16 inputs are rotated at float32 and cast back.
"""

import torch


def apply_rope(x, positions, base=10000.0):
    """Rotate the last axis of ``x`` by angles proportional to each row's absolute position.

    Args:
        x: (..., seq_len, d) floating tensor, d even.
        positions: seq_len integers: a list, or an integer tensor of shape (seq_len,) (any integer
            dtype), e.g. ``T .. T+seq_len-1`` when decoding after T cached tokens.
        base: the frequency base (10000 in RoFormer and LLaMA 1/2).

    Returns:
        Tensor of the shape and dtype of ``x``: ``x * cos(theta) + rotate_half(x) * sin(theta)``,
        with ``theta[r] = positions[r] * base^(-2i/d)`` for ``i < d/2``, repeated twice along the last
        axis, and ``rotate_half([x1, x2]) = [-x2, x1]``. Differentiable in ``x``.

    Raises:
        ValueError: ``d`` odd, or ``positions`` not ``seq_len`` integers.
    """
    d = x.shape[-1]
    if d % 2 != 0:
        raise ValueError(f"the last axis of x must be even, got d={d}")
    pos = torch.as_tensor(positions, device=x.device)
    if pos.dtype.is_floating_point or pos.dtype.is_complex or pos.shape != (x.shape[-2],):
        raise ValueError(f"positions must be {x.shape[-2]} integers, got shape {tuple(pos.shape)} of {pos.dtype}")
    work = torch.float64 if x.dtype == torch.float64 else torch.float32    # rotate half precision at float32
    inv_freq = 1.0 / (base ** (torch.arange(0, d, 2, dtype=work, device=x.device) / d))  # (d/2,)
    theta = pos.to(work)[:, None] * inv_freq[None, :]                     # (L, d/2)
    emb = torch.cat([theta, theta], dim=-1)                               # (L, d)
    cos, sin = emb.cos(), emb.sin()                                       # (L, d) each
    xw = x.to(work)                                                       # (..., L, d)
    x1, x2 = xw[..., : d // 2], xw[..., d // 2:]                          # (..., L, d/2) each
    rotated = torch.cat([-x2, x1], dim=-1)                                # (..., L, d) rotate_half(x)
    return (xw * cos + rotated * sin).to(x.dtype)                         # (..., L, d) in x's dtype
