"""Baseline: sliding-window attention by query chunks, as blocked local-attention kernels tile it.

Chunks of ``window`` queries are scored with one matmul against the at most ``2 * window - 1``
(causal) or ``3 * window - 2`` keys their windows reach, the band and the mask applied to the tile,
a max-shifted softmax, one matmul with the values. float16/bfloat16 input is accumulated in float32
(the contract's rule), so the half-precision tolerance comes from float32 internals only and a
computation in half precision throughout is not widened into full marks. The matmul tiles round
differently from the reference's gathered einsum; it runs on the host only, beside the reference, so
that the tolerance covers this standard formulation too (see ``grader.judge.tolerance``).
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """(B, H, L_q, d_v) in query's dtype; see the exercise's spec for the contract."""
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k, d_v = key.shape[2], value.shape[-1]
    acc = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q, k, v = query.to(acc) / math.sqrt(d_k), key.to(acc), value.to(acc)   # (B, H, L, d)
    offset = L_k - L_q
    m = None if mask is None else torch.broadcast_to(mask, (B, H, L_q, L_k))
    chunks = []
    for c in range(0, L_q, window):
        n = min(window, L_q - c)
        lo = max(c + offset - window + 1, 0)
        hi = min(c + n + offset if causal else c + n + offset + window - 1, L_k)
        if hi <= lo:
            chunks.append(torch.zeros(B, H, n, d_v, dtype=acc))
            continue
        rel = (torch.arange(c, c + n) + offset).view(n, 1) - torch.arange(lo, hi)    # (n, hi - lo)
        ok = ((rel >= 0) & (rel < window)) if causal else (rel.abs() < window)
        if m is not None:
            ok = ok & (m[:, :, c:c + n, lo:hi] != 0)
        s = (q[:, :, c:c + n] @ k[:, :, lo:hi].transpose(-1, -2)).masked_fill(~ok, float("-inf"))
        mx = s.amax(-1, keepdim=True)
        e = torch.exp(s - torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx)))
        z = e.sum(-1, keepdim=True)
        chunks.append((e @ v[:, :, lo:hi]) / torch.where(z > 0, z, torch.ones_like(z)))
    return torch.cat(chunks, dim=2).to(query.dtype)
