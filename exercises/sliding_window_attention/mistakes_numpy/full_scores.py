"""the whole (L_q, L_k) score matrix q @ k^T was computed and the band picked out of it: the values are right, but work and memory grow like L^2 instead of L * window (score only each query's window of keys).

Must fail: memory_scaling, flops_scaling
"""
PATCH = [
    ('    kb, vb = k[:, :, idx], v[:, :, idx]                         # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)\n    s = np.einsum("bhqd,bhqwd->bhqw", q, kb)                    # (B, H, L_q, W) scores of the band',
     '    vb = v[:, :, idx]                                           # (B, H, L_q, W, d_v)\n    scores = q @ np.swapaxes(k, -1, -2)                                  # (B, H, L_q, L_k): the whole matrix\n    s = scores[:, :, np.arange(L_q)[:, None], idx]                # (B, H, L_q, W) picked out of it'),
]
