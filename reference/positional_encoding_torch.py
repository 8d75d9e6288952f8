"""Reference solution, PyTorch track: sinusoidal positional encoding as a float32 tensor.

The same formula as ``reference/positional_encoding.py`` (Vaswani et al. 2017, interleaved sin/cos),
with the angles formed in float64 tensors and only the result cast to float32: a float32 angle (what
``torch.arange(...).float()`` gives) near position 10^6 is off by up to 0.03 rad.
"""

import torch


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    """Sinusoidal positional encoding of positions ``offset .. offset + seq_len - 1``.

    Args:
        seq_len: number of positions (rows), an int >= 0.
        d_model: model width (columns), an even int >= 0.
        offset: position of row 0, an int >= 0.

    Returns:
        (seq_len, d_model) float32 tensor: column 2i is sin(p * 10000^(-2i/d_model)), column 2i+1 the
        cos of the same angle, for p = offset + row.

    Raises:
        ValueError: ``d_model`` odd or negative, ``seq_len < 0`` or ``offset < 0``.
    """
    if d_model < 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be even and >= 0, got {d_model}")
    if seq_len < 0:
        raise ValueError(f"seq_len must be >= 0, got {seq_len}")
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    p = torch.arange(offset, offset + seq_len, dtype=torch.float64)                  # (L,)
    inv_freq = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)  # (d_model/2,)
    angle = p[:, None] * inv_freq[None, :]                                           # (L, d_model/2) float64
    pe = torch.empty(seq_len, d_model, dtype=torch.float64)                          # (L, d_model)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.to(torch.float32)                                                      # (L, d_model) float32
