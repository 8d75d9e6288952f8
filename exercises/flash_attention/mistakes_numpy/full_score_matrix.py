"""the whole (L_q, L_k) score matrix q @ k^T is built before the key blocks are visited, so peak memory grows with seq_len^2 although the values are right (compute each block's scores inside the loop: only L_q x block_size at a time).

Must fail: memory_scaling
"""
PATCH = [
    ("""    for ks in range(0, max(k_end, 0), block_size):
        s = qs @ np.swapaxes(k[:, :, ks:ks + block_size], -1, -2)  # (B, H, L_q, b)""",
     """    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)          # (B, H, L_q, L_k): the whole matrix
    for ks in range(0, max(k_end, 0), block_size):
        s = scores[..., ks:ks + block_size]                     # (B, H, L_q, b)"""),
]
