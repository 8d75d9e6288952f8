"""Confuser: angles in float64 throughout, but div_term uses a hand-typed ln(10000) = 9.21034
(true 9.2103403720): frequencies off by a relative (2i/d)*3.7e-8*... invisible below position ~10^3,
about 0.015 rad in the middle pairs near 10^6. No float32 anywhere before the final cast.

Must not name: "computed in float32"
May name: float32_angles
"""
import numpy as np

LN_10000 = 9.21034


def sinusoidal_positional_encoding(seq_len, d_model, offset=0):
    if d_model < 0 or d_model % 2:
        raise ValueError("d_model must be even")
    if seq_len < 0 or offset < 0:
        raise ValueError("seq_len and offset must be >= 0")
    p = offset + np.arange(seq_len, dtype=np.float64)
    div_term = np.exp(np.arange(0, d_model, 2, dtype=np.float64) * (-LN_10000 / d_model))
    angle = p[:, None] * div_term[None, :]
    pe = np.empty((seq_len, d_model), dtype=np.float64)
    pe[:, 0::2] = np.sin(angle)
    pe[:, 1::2] = np.cos(angle)
    return pe.astype(np.float32)
