"""Wrong: for each query the scores against all L_k keys are computed with the ndarray.dot method
(k.dot(q_i)), and only then is the window sliced out: O(L_q * L_k * d) work. The method went past the
NumPy FLOP counter (full marks); CountingArray.dot now counts it as np.dot. From a helper hunt.

Must fail: flops_scaling
"""
import math
import numpy as np


def sliding_window_attention(query, key, value, window, causal=True, mask=None):
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError("window must be an integer >= 1")
    B, H, L_q, d_k = query.shape
    L_k, d_v = key.shape[2], value.shape[3]
    work = np.dtype(np.float32) if query.dtype == np.float16 else query.dtype
    q = query.astype(work) * work.type(1.0 / math.sqrt(d_k))
    k, v = key.astype(work), value.astype(work)
    mb = None if mask is None else np.broadcast_to(mask, (B, H, L_q, L_k))
    out = np.zeros((B, H, L_q, d_v), dtype=work)
    off = L_k - L_q
    for b in range(B):
        for h in range(H):
            kk, vv = k[b, h], v[b, h]
            for i in range(L_q):
                p = i + off
                lo = max(p - window + 1, 0)
                hi = p + 1 if causal else min(p + window, L_k)
                s_all = kk.dot(q[b, h, i])                 # (L_k,) scores of every key
                s = s_all[lo:hi]                           # keep the window
                if mb is not None:
                    s = np.where(mb[b, h, i, lo:hi] != 0, s, -np.inf)
                if s.size == 0 or not np.isfinite(s).any():
                    continue
                e = np.exp(s - s.max())
                out[b, h, i] = (e / e.sum()).dot(vv[lo:hi])
    return out.astype(query.dtype)
