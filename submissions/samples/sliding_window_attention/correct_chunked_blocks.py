"""Correct: chunks of `window` queries. The queries of a chunk need keys from window - 1 before the
chunk's first position to its last position (causal), or window - 1 past it (not causal): at most
2 * window - 1 or 3 * window - 2 keys, so each chunk scores a (window, ~2-3 window) tile against the
band condition and the mask; the whole is O(L * window) in work and memory.
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k, d_v = key.shape[2], value.shape[-1]
    dtype = query.dtype
    acc = torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype
    q, k, v = query.to(acc) / math.sqrt(d_k), key.to(acc), value.to(acc)
    offset = L_k - L_q
    m = None if mask is None else torch.broadcast_to(mask, (B, H, L_q, L_k))
    chunks = []
    for c in range(0, L_q, window):
        n = min(window, L_q - c)
        p = torch.arange(c, c + n) + offset                              # absolute positions of the chunk
        lo = max(c + offset - window + 1, 0)
        hi = min(c + n + offset if causal else c + n + offset + window - 1, L_k)
        if hi <= lo:
            chunks.append(torch.zeros(B, H, n, d_v, dtype=acc))
            continue
        j = torch.arange(lo, hi)
        rel = p.unsqueeze(1) - j                                         # (n, hi - lo)
        ok = ((rel >= 0) & (rel < window)) if causal else (rel.abs() < window)
        if m is not None:
            ok = ok & (m[:, :, c:c + n, lo:hi] != 0)
        s = (q[:, :, c:c + n] @ k[:, :, lo:hi].transpose(-1, -2)).masked_fill(~ok, float("-inf"))
        mx = s.amax(-1, keepdim=True)
        mx = torch.where(mx == float("-inf"), torch.zeros_like(mx), mx)
        e = torch.exp(s - mx)
        z = e.sum(-1, keepdim=True)
        chunks.append((e @ v[:, :, lo:hi]) / torch.where(z > 0, z, torch.ones_like(z)))
    return torch.cat(chunks, dim=2).to(dtype)
