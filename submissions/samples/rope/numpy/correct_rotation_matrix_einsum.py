"""Correct: a (L, d, d) block rotation matrix per position, applied with einsum."""
import numpy as np


def apply_rope(x, positions, base=10000.0):
    x = np.asarray(x)
    L, d = x.shape[-2], x.shape[-1]
    if d % 2:
        raise ValueError("odd head dim")
    h = d // 2
    ct = np.float64 if x.dtype == np.float64 else np.float32
    pos = np.array([int(p) for p in positions], dtype=np.float64)
    inv = base ** (-np.arange(h, dtype=np.float64) * 2 / d)
    th = np.outer(pos, inv)
    c, s = np.cos(th), np.sin(th)
    R = np.zeros((L, d, d), dtype=np.float64)
    idx = np.arange(h)
    # out[i] = x[i] c - x[i+h] s ; out[i+h] = x[i+h] c + x[i] s  (R[l, in, out])
    R[:, idx, idx] = c
    R[:, idx + h, idx] = -s
    R[:, idx + h, idx + h] = c
    R[:, idx, idx + h] = s
    return np.einsum("...li,lio->...lo", x.astype(ct), R.astype(ct)).astype(x.dtype)
