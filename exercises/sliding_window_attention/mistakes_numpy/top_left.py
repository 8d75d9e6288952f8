"""the window is aligned top-left: with L_q < L_k query i was placed at position i; the contract aligns it bottom-right (position i + L_k - L_q, the last L_q positions, as with a KV cache).

Must fail: cache_alignment
"""
PATCH = [
    ('    pos = np.arange(L_q) + (L_k - L_q)                          # (L_q,) absolute position of each query',
     '    pos = np.arange(L_q)                          # (L_q,) absolute position of each query'),
]
