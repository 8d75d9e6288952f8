"""Reference solution: sinusoidal positional encoding (NumPy).

Vaswani et al., *Attention Is All You Need* (2017), section 3.5, in its interleaved layout:
``PE[r, 2i] = sin(p / 10000^(2i/d_model))`` and ``PE[r, 2i+1] = cos(p / 10000^(2i/d_model))`` for
position ``p = offset + r``. Angles are formed in float64 and only the result is cast to float32, so
positions up to 10^6 are right to float32 rounding (a float32 angle near 10^6 is off by up to 0.03).
"""

import numpy as np


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    """Sinusoidal positional encoding of positions ``offset .. offset + seq_len - 1``.

    Args:
        seq_len: number of positions (rows), an int >= 0.
        d_model: model width (columns), an even int >= 0.
        offset: position of row 0, an int >= 0 (e.g. the number of cached tokens when decoding).

    Returns:
        (seq_len, d_model) float32 array; row r encodes position offset + r, column 2i holds
        sin(p * 10000^(-2i/d_model)) and column 2i+1 holds cos of the same angle.

    Raises:
        ValueError: ``d_model`` odd or negative, ``seq_len < 0`` or ``offset < 0``.
    """
    if d_model < 0 or d_model % 2 != 0:
        raise ValueError(f"d_model must be even and >= 0, got {d_model}")
    if seq_len < 0:
        raise ValueError(f"seq_len must be >= 0, got {seq_len}")
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    p = offset + np.arange(seq_len, dtype=np.float64)                     # (L,) positions, exact in float64
    two_i = np.arange(0, d_model, 2, dtype=np.float64)                    # (d_model/2,) = 2i
    inv_freq = np.power(10000.0, -two_i / d_model)                        # (d_model/2,) 10000^(-2i/d_model)
    angle = p[:, None] * inv_freq[None, :]                                # (L, d_model/2) float64
    pe = np.empty((seq_len, d_model), dtype=np.float64)                   # (L, d_model)
    pe[:, 0::2] = np.sin(angle)                                           # even columns: sin
    pe[:, 1::2] = np.cos(angle)                                           # odd columns: cos
    return pe.astype(np.float32)                                          # (L, d_model) float32
