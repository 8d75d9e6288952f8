"""Wrong: with a mask, the mask is materialised broadcast to (B|1, H|1, L_q, L_k) bool (contiguous, for
advanced indexing) before the band is gathered from it: an L_q x L_k matrix on the masked paths, which
the contract forbids on any path. One byte per element beside the paths' float temporaries passed on
peak bytes (full marks); the largest single array grows like L^2. From a helper hunt.

Must fail: memory_scaling
"""
import math
import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError("window must be an integer >= 1")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q = query.to(work) / math.sqrt(d_k)
    k, v = key.to(work), value.to(work)
    W = window if causal else 2 * window - 1
    pos = torch.arange(L_q) + (L_k - L_q)
    idx = (pos - window + 1).view(L_q, 1) + torch.arange(W)
    keep = (idx >= 0) & (idx < L_k)
    idx = idx.clamp(0, max(L_k - 1, 0))
    if mask is not None:
        m = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))
        # full (b, h, L_q, L_k) boolean allow-matrix, then read it at the band
        full = (m != 0).expand(m.shape[0], m.shape[1], L_q, L_k).contiguous()
        keep = keep & full[:, :, torch.arange(L_q).view(L_q, 1), idx]
    kb, vb = k[:, :, idx], v[:, :, idx]
    s = torch.einsum("bhqd,bhqwd->bhqw", q, kb).masked_fill(~keep, float("-inf"))
    mx = s.amax(-1, keepdim=True)
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    p = torch.exp(s - mx)
    l = p.sum(-1, keepdim=True)
    p = p / torch.where(l > 0, l, torch.ones_like(l))
    return torch.einsum("bhqw,bhqwd->bhqd", p, vb).to(query.dtype)
