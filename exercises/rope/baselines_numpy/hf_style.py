"""Baseline, NumPy track: RoPE the way Hugging Face's LLaMA applies it, translated to NumPy.

The cos/sin table is built at float32 (float64 for float64 input) through an outer product with
frequencies from exp/log, cast to the input's dtype, and the rotation runs in the input's dtype
(float16 arithmetic for float16 input). Correct; it runs on the host only, beside the reference,
so that the tolerance covers this standard formulation (see ``grader.judge.tolerance``).
"""

import math

import numpy as np


def apply_rope(x, positions, base=10000.0):
    """Rotate ``x`` (..., L, d) by its positions (L,); same shape and dtype."""
    d = x.shape[-1]
    table = np.float64 if x.dtype == np.float64 else np.float32
    inv_freq = np.exp(np.arange(0, d, 2, dtype=table) * table(-math.log(base) / d))   # (d/2,)
    freqs = np.outer(np.asarray(positions).astype(table), inv_freq)                  # (L, d/2)
    emb = np.concatenate([freqs, freqs], axis=-1)                                     # (L, d)
    cos, sin = np.cos(emb).astype(x.dtype), np.sin(emb).astype(x.dtype)               # (L, d)
    rotated = np.concatenate([-x[..., d // 2:], x[..., : d // 2]], axis=-1)           # (..., L, d)
    return x * cos + rotated * sin                                                    # (..., L, d)
