"""the tiles were skipped: plain softmax attention over the whole (L_q, L_k) score matrix (the scores, their exponentials and the weights @ V at once), so peak memory grows with L_q x L_k on every path although the values are right (visit keys and values in blocks of block_size with a running max and a running sum).

Must fail: memory_scaling
"""
PATCH = [
    ('    offset = L_k - L_q\n',
     '    offset = L_k - L_q\n    # plain attention on every path: the tiles are skipped\n    s = (q @ np.swapaxes(k, -1, -2)) * q.dtype.type(1.0 / math.sqrt(d))  # (B, H, L_q, L_k): the whole matrix\n    if causal:\n        s = np.where(np.arange(L_k)[None, :] > np.arange(L_q)[:, None] + offset, -np.inf, s)\n    top = s.max(axis=-1, keepdims=True)\n    e = np.exp(s - np.where(np.isfinite(top), top, 0))\n    total = e.sum(axis=-1, keepdims=True)\n    out = np.zeros((B, H, L_q, v.shape[-1]), dtype=q.dtype)\n    np.divide(e @ v, total, out=out, where=total > 0)\n    return out.astype(q.dtype)\n'),
]
