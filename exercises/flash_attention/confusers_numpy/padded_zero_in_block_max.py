"""Confuser: keys are zero-padded to a whole number of blocks; the padded keys are masked out of the sum
and the output, but their score 0 enters the block max. m starts at -inf and goes below 0 except in a
block with padding, where a row whose real scores are all in the negative hundreds is wiped out
(exp(m_old - 0) underflows). The bank's sentence once said the running max 'never went below 0' or
'started at 0' (helper hunt).

Must not name: "never went below 0", "started at 0 instead of -inf", exp_without_max_shift, "sees no key"
May name: running_max_init_zero
"""
import math

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    """Exact softmax attention computed key block by key block.

    Args:
        q: (B, H, L_q, d) array. k, v: (B, H, L_k, d) arrays.
        block_size: rows of keys/values per block, an int >= 1.
        causal: mask key ``j`` for query ``i`` when ``j > i + L_k - L_q``.

    Returns:
        (B, H, L_q, d) array in ``q``'s dtype.

    Raises:
        ValueError: ``block_size`` is not an integer >= 1.
    """
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    offset = L_k - L_q
    qs = q * q.dtype.type(1.0 / math.sqrt(d))                   # (B, H, L_q, d)
    m = np.full((B, H, L_q, 1), -np.inf, dtype=q.dtype)         # running max
    l = np.zeros((B, H, L_q, 1), dtype=q.dtype)                 # running sum of exp(s - m)
    acc = np.zeros((B, H, L_q, v.shape[-1]), dtype=q.dtype)     # running sum of exp(s - m) v
    k_end = min(L_k, L_q + offset) if causal else L_k
    rows = np.arange(L_q)[:, None]
    pad = (-L_k) % block_size
    kp = np.concatenate([k, np.zeros((B, H, pad, k.shape[-1]), k.dtype)], axis=2)
    vp = np.concatenate([v, np.zeros((B, H, pad, v.shape[-1]), v.dtype)], axis=2)
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ np.swapaxes(kp[:, :, ks:ks + block_size], -1, -2)  # (B, H, L_q, block_size)
        valid = (np.arange(ks, ks + block_size) < L_k).astype(q.dtype)
        if causal:
            cols = np.arange(ks, ks + s.shape[-1])[None, :]
            s = np.where(cols > rows + offset, -np.inf, s)
        m_new = np.maximum(m, s.max(axis=-1, keepdims=True))
        m_safe = np.where(np.isfinite(m_new), m_new, 0)
        p = np.exp(s - m_safe) * valid                          # masked -> 0
        alpha = np.exp(m - m_safe)
        l = alpha * l + p.sum(axis=-1, keepdims=True)
        acc = alpha * acc + p @ vp[:, :, ks:ks + block_size]
        m = m_new
    out = np.zeros_like(acc)
    np.divide(acc, l, out=out, where=l > 0)
    return out.astype(q.dtype)
