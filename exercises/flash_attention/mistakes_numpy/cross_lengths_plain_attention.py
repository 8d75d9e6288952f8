"""when L_q != L_k (a chunk of queries over a longer cache, or more queries than keys) the tiles were skipped for plain attention over the whole (L_q, L_k) score matrix, so that path's peak memory grows with L_q x L_k although the values are right (the tiled loop handles any L_q and L_k: only the causal offset L_k - L_q changes; equal lengths are fine).

Must fail: memory_scaling
"""
PATCH = [
    ("""    offset = L_k - L_q
""",
     """    offset = L_k - L_q
    if L_q != L_k:                                              # plain attention for unequal lengths
        s = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(1.0 / math.sqrt(d))  # (B, H, L_q, L_k): the whole matrix
        if causal:
            s = np.where(np.arange(L_k)[None, :] > np.arange(L_q)[:, None] + offset, -np.inf, s)
        top = s.max(axis=-1, keepdims=True)
        e = np.exp(s - np.where(np.isfinite(top), top, 0))
        total = e.sum(axis=-1, keepdims=True)
        out = np.zeros((B, H, L_q, v.shape[-1]), dtype=q.dtype)
        np.divide(e @ v, total, out=out, where=total > 0)
        return out.astype(q.dtype)
"""),
]
