"""when L_q != L_k (a chunk of queries over a longer cache), the whole (L_q, L_k) score matrix was computed and the band picked out of it: that path grows like L_q x L_k although the values are right (gather each query's window of keys at its bottom-right position, as for equal lengths, which are fine).

Must fail: memory_scaling, flops_scaling
"""
PATCH = [
    ('    kb, vb = k[:, :, idx], v[:, :, idx]                         # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)\n    s = torch.einsum("bhqd,bhqwd->bhqw", q, kb)                 # (B, H, L_q, W) scores of the band',
     '    if L_q != L_k:\n        vb = v[:, :, idx]                                           # (B, H, L_q, W, d_v)\n        scores = q @ k.transpose(-2, -1)                                  # (B, H, L_q, L_k): the whole matrix\n        s = scores[:, :, torch.arange(L_q).view(L_q, 1), idx]                # (B, H, L_q, W) picked out of it\n    else:\n        kb, vb = k[:, :, idx], v[:, :, idx]                         # (B, H, L_q, W, d_k), (B, H, L_q, W, d_v)\n        s = torch.einsum("bhqd,bhqwd->bhqw", q, kb)                 # (B, H, L_q, W) scores of the band'),
]
