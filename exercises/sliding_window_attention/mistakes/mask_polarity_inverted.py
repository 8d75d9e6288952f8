"""the mask was applied with the opposite polarity: nonzero / True means 'may attend', 0 / False 'masked out'.

Must fail: masks
"""
PATCH = [
    ('        keep = keep & (m[:, :, rows, cols] != 0)                # (B|1, H|1, L_q, W)',
     '        keep = keep & (m[:, :, rows, cols] == 0)                # (B|1, H|1, L_q, W)'),
]
