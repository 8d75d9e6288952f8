"""with causal=True, an additive (L_q, L_k) bias (0 on the keys a query sees, -inf above the bottom-right diagonal) was built once and sliced per key block: the causal path holds an L_q x L_k matrix, so its peak memory grows with seq_len^2 although the values are right (build each block's mask from that block's column indices: only L_q x block_size at a time; the path without causal is fine).

Must fail: memory_scaling
"""
PATCH = [
    ("""    rows = np.arange(L_q)[:, None]
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ np.swapaxes(k[:, :, ks:ks + block_size], -1, -2)  # (B, H, L_q, b)
        if causal:
            cols = np.arange(ks, ks + s.shape[-1])[None, :]
            s = np.where(cols > rows + offset, -np.inf, s)""",
     """    rows = np.arange(L_q)[:, None]
    if causal:                                                  # (L_q, L_k): the whole causal bias
        bias = np.where(np.arange(L_k)[None, :] > rows + offset, -np.inf, 0).astype(q.dtype)
    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ np.swapaxes(k[:, :, ks:ks + block_size], -1, -2)  # (B, H, L_q, b)
        if causal:
            s = s + bias[:, ks:ks + s.shape[-1]]"""),
]
