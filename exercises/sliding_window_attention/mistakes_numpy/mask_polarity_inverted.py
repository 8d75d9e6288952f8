"""the mask was applied with the opposite polarity: nonzero / True means 'may attend', 0 / False 'masked out'.

Must fail: masks
"""
PATCH = [
    ('        keep = keep & (band[:, :, np.arange(L_q)[:, None], idx] != 0)  # (B, H, L_q, W)',
     '        keep = keep & (band[:, :, np.arange(L_q)[:, None], idx] == 0)  # (B, H, L_q, W)'),
]
