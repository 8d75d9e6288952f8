"""Correct: rotate_half as a fancy-index permutation times a sign vector; cos/sin from float64, cast to the work dtype."""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    d = x.shape[-1]
    if d & 1:
        raise ValueError("d must be even, got %d" % d)
    work = np.float64 if x.dtype == np.float64 else np.float32
    perm = np.r_[np.arange(d // 2, d), np.arange(0, d // 2)]
    sign = np.r_[-np.ones(d // 2), np.ones(d // 2)].astype(work)
    freqs = np.power(float(base), -np.arange(0, d, 2) / d)
    ang = np.asarray(positions, dtype=np.int64)[:, None].astype(np.float64) * np.tile(freqs, 2)[None]
    cos, sin = np.cos(ang).astype(work), np.sin(ang).astype(work)
    xw = np.array(x, dtype=work, copy=True)
    return (xw * cos + xw[..., perm] * sign * sin).astype(x.dtype, copy=False)
