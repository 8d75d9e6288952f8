"""the mask was added to the scores like an additive bias (scores + mask) instead of hiding the keys where it is 0: a 0/1 or 0/3 mask shifts the scores and hides nothing; nonzero means 'may attend', whatever its value.

Must fail: masks
"""
PATCH = [
    ('        keep = keep & (band[:, :, np.arange(L_q)[:, None], idx] != 0)  # (B, H, L_q, W)',
     '        bias = band[:, :, np.arange(L_q)[:, None], idx].astype(work)  # added to the scores'),
    ('    s = np.where(keep, s, -np.inf)',
     '    s = np.where(keep, s, -np.inf)\n    if mask is not None:\n        s = s + bias'),
]
