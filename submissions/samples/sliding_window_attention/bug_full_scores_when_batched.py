"""Wrong: the band of keys is gathered for one sequence, but for a batch the whole (L_q, L_k) score
matrix q @ k^T is computed ("one large matmul is faster") and the band picked out of it: work and
memory grow like L^2 on the batched path only. A probe of one sequence gave full marks; the
batch-of-two path sees it (issue 24, item 4).

Must fail: memory_scaling, flops_scaling
Mistake: full_scores
"""
import math

import torch


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    """Softmax attention restricted to a sliding window of keys.

    Args:
        query: (B, H, L_q, d_k) tensor. key: (B, H, L_k, d_k). value: (B, H, L_k, d_v).
        window: an int >= 1; causal: query at position p sees keys p - window < j <= p,
            otherwise |p - j| < window, with p = i + L_k - L_q (bottom-right).
        causal: bool.
        mask: None, or a bool/numeric tensor broadcastable to (B, H, L_q, L_k); nonzero = may attend.
            It is indexed at the band's (L_q, W) positions on its own axes: indexing a view broadcast
            to (B, H, L_q, L_k) would cost nothing in memory but L_q * L_k in counted work.

    Returns:
        (B, H, L_q, d_v) tensor in ``query``'s dtype; rows that see no key are 0. Differentiable.

    Raises:
        ValueError: ``window`` is not an integer >= 1.
    """
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ValueError(f"window must be an integer >= 1, got {window!r}")
    B, H, L_q, d_k = query.shape
    L_k = key.shape[2]
    work = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q = query.to(work) * (1.0 / math.sqrt(d_k))                 # (B, H, L_q, d_k)
    k, v = key.to(work), value.to(work)                         # (B, H, L_k, d_k), (B, H, L_k, d_v)
    W = window if causal else 2 * window - 1                    # keys in one query's band
    pos = torch.arange(L_q) + (L_k - L_q)                       # (L_q,) absolute position of each query
    idx = (pos - window + 1).view(L_q, 1) + torch.arange(W)     # (L_q, W) the band's key indices
    keep = (idx >= 0) & (idx < L_k)                             # (L_q, W) inside the key sequence
    idx = idx.clamp(0, max(L_k - 1, 0))
    if mask is not None:  # read at the band's positions only, on the mask's own (broadcastable) axes
        m = mask.reshape((1,) * (4 - mask.dim()) + tuple(mask.shape))  # (B|1, H|1, L_q|1, L_k|1)
        rows = torch.arange(L_q).view(L_q, 1) if m.shape[2] != 1 else torch.zeros(L_q, 1, dtype=torch.long)
        cols = idx if m.shape[3] != 1 else torch.zeros_like(idx)
        keep = keep & (m[:, :, rows, cols] != 0)                # (B|1, H|1, L_q, W)
    if B > 1:  # a batch: one large matmul, then the band picked out of it
        vb = v[:, :, idx]                                       # (B, H, L_q, W, d_v)
        scores = q @ k.transpose(-2, -1)                        # (B, H, L_q, L_k): the whole matrix
        s = scores[:, :, torch.arange(L_q).view(L_q, 1), idx]   # (B, H, L_q, W)
    else:
        kb, vb = k[:, :, idx], v[:, :, idx]                     # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)
        s = torch.einsum("bhqd,bhqwd->bhqw", q, kb)             # (B, H, L_q, W) scores of the band
    s = s.masked_fill(~keep, float("-inf"))
    m = s.amax(dim=-1, keepdim=True)                            # (B, H, L_q, 1)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))  # rows that see no key
    p = torch.exp(s - m)                                        # (B, H, L_q, W); masked -> 0
    l = p.sum(dim=-1, keepdim=True)                             # (B, H, L_q, 1)
    att = p / torch.where(l > 0, l, torch.ones_like(l))         # rows that see no key stay 0
    y = torch.einsum("bhqw,bhqwd->bhqd", att, vb)               # (B, H, L_q, d_v)
    return y.to(query.dtype)
