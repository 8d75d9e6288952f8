"""with causal=False, the whole (L_q, L_k) score matrix was computed and the two-sided band picked out of it: the non-causal path grows like L^2 (gather 2 * window - 1 keys per query instead).

Must fail: memory_scaling, flops_scaling
"""
PATCH = [
    ('    kb, vb = k[:, :, idx], v[:, :, idx]                         # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)\n    s = torch.einsum("bhqd,bhqwd->bhqw", q, kb)                 # (B, H, L_q, W) scores of the band',
     '    if not causal:\n        vb = v[:, :, idx]                                           # (B, H, L_q, W, d_v)\n        scores = q @ k.transpose(-2, -1)                                  # (B, H, L_q, L_k): the whole matrix\n        s = scores[:, :, torch.arange(L_q).view(L_q, 1), idx]                # (B, H, L_q, W) picked out of it\n    else:\n        kb, vb = k[:, :, idx], v[:, :, idx]                         # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)\n        s = torch.einsum("bhqd,bhqwd->bhqw", q, kb)                 # (B, H, L_q, W) scores of the band'),
]
