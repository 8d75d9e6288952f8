"""Baseline, NumPy track: tiled attention whose running state is a log-sum-exp instead of (max, sum).

Each key block's ``logsumexp`` is merged into the row's running one with ``np.logaddexp`` and the
output is reweighted by ``exp(lse_old - lse_new)``, so it is normalised after every block. Correct,
but in float32 the exponent ``s - lse`` carries the rounding of ``lse`` itself: with every score of a
row in the negative hundreds that is about ``|lse| * 6e-8`` relative on every weight, an error the
max-and-sum reference does not make. It runs on the host only, beside the reference, so that the
tolerance covers this standard formulation too (see ``grader.judge.tolerance``). float16 input is
computed at float32 and cast back.
"""

import math

import numpy as np


def tiled_attention(q, k, v, block_size=64, causal=False):
    """softmax(q k^T / sqrt(d)) v over key blocks of ``block_size``; (B, H, L_q, d) in q's dtype."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")
    work = np.float64 if q.dtype == np.float64 else np.float32
    B, H, L_q, d = q.shape
    L_k = k.shape[2]
    qs = q.astype(work) / work(math.sqrt(d))                                   # (B, H, L_q, d)
    lse = np.full((B, H, L_q, 1), -np.inf, dtype=work)                        # running log-sum-exp
    out = np.zeros((B, H, L_q, v.shape[-1]), dtype=work)                      # normalised so far
    rows = np.arange(L_q)[:, None] + (L_k - L_q)
    for ks in range(0, L_k, block_size):
        s = qs @ np.swapaxes(k[:, :, ks:ks + block_size].astype(work), -1, -2)  # (B, H, L_q, b)
        if causal:
            s = np.where(np.arange(ks, ks + s.shape[-1])[None, :] > rows, -np.inf, s)
        top = s.max(axis=-1, keepdims=True)
        top0 = np.where(np.isfinite(top), top, 0)
        with np.errstate(divide="ignore"):
            block_lse = np.log(np.exp(s - top0).sum(axis=-1, keepdims=True)) + top0  # -inf: nothing seen
        new = np.logaddexp(lse, block_lse)
        new0 = np.where(np.isfinite(new), new, 0)
        out = out * np.exp(lse - new0) + np.exp(s - new0) @ v[:, :, ks:ks + block_size].astype(work)
        lse = new
    return out.astype(q.dtype)
