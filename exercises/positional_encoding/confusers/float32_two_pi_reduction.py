"""Confuser: the angles are formed in float64, then reduced modulo 2*pi with 2*pi as a float32
constant (6.2831855, off by 1.7e-7), so each angle drifts by floor(angle / 2*pi) times that error:
about 0.03 radians near position 10^6, as much as float32 angles are off, while no angle is float32.

Must not name: "were computed in float32"
May name: float32_angles, "only to the precision of float32 angles"
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
    angle = np.mod(angle, np.float32(2 * np.pi))                          # reduced by a float32 2*pi: wrong
    pe = np.empty((seq_len, d_model), dtype=np.float64)                   # (L, d_model)
    pe[:, 0::2] = np.sin(angle)                                           # even columns: sin
    pe[:, 1::2] = np.cos(angle)                                           # odd columns: cos
    return pe.astype(np.float32)                                          # (L, d_model) float32
