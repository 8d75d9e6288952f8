"""Bug: a per-query loop whose window starts one key too early: range(p - window, p + 1) holds
window + 1 keys (and |p - j| <= window when not causal), the classic off-by-one of "the last
`window` tokens".

Must fail: values, window_one, non_causal
Mistake: window_off_by_one
"""

import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if not isinstance(window, int) or window < 1:
        raise ValueError("window must be >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    dt = query.dtype
    q, k, v = (t.float() if dt in (torch.float16, torch.bfloat16) else t for t in (query, key, value))
    out = torch.zeros(B, H, L_q, v.shape[-1], dtype=q.dtype)
    outs = []
    for i in range(L_q):
        p = i + L_k - L_q
        lo, hi = max(p - window, 0), min((p + 1) if causal else (p + window + 1), L_k)
        if hi <= lo:
            outs.append(out[:, :, i])
            continue
        s = (k[:, :, lo:hi] @ q[:, :, i].unsqueeze(-1)).squeeze(-1) / math.sqrt(d_k)
        if mask is not None:
            s = s.masked_fill(mask.expand(B, H, L_q, L_k)[:, :, i, lo:hi] == 0, float("-inf"))
        mx = s.amax(-1, keepdim=True)
        mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
        e = torch.exp(s - mx)
        z = e.sum(-1, keepdim=True)
        outs.append((e / torch.where(z > 0, z, torch.ones_like(z))).unsqueeze(-2).matmul(v[:, :, lo:hi]).squeeze(-2))
    return torch.stack(outs, 2).to(dt)
