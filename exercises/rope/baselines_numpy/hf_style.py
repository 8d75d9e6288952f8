"""Baseline, NumPy track: RoPE the way Hugging Face's LLaMA applies it, translated to NumPy.

The cos/sin table is built at float32 (float64 for float64 input) through an outer product with
frequencies from exp/log, and the rotation runs at that precision: float16 input is rotated at
float32 and cast back, as the contract asks (Hugging Face rotates half input in its own dtype; the
tolerance of float16 cases comes from float32 internals only). It runs on the host only, beside the
reference, so that the tolerance covers this standard formulation (see ``grader.judge.tolerance``).
"""

import math

import numpy as np


def apply_rope(x, positions, base=10000.0):
    """Rotate ``x`` (..., L, d) by its positions (L,); same shape and dtype."""
    d = x.shape[-1]
    if d % 2:
        raise ValueError(f"the last axis of x must be even, got d={d}")
    table = np.float64 if x.dtype == np.float64 else np.float32
    inv_freq = np.exp(np.arange(0, d, 2, dtype=table) * table(-math.log(base) / d))   # (d/2,)
    freqs = np.outer(np.asarray(positions).astype(table), inv_freq)                  # (L, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)                                     # (L, d)
    cos, sin = np.cos(emb), np.sin(emb)                                               # (L, d)
    xw = x.astype(table)                                                              # float16 -> float32
    rotated = np.concatenate([-xw[..., d // 2:], xw[..., : d // 2]], axis=-1)         # (..., L, d)
    return (xw * cos + rotated * sin).astype(x.dtype)                                 # (..., L, d)
