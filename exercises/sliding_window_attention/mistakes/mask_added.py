"""the mask was added to the scores like an additive bias (scores + mask) instead of hiding the keys where it is 0: a 0/1 or 0/3 mask shifts the scores and hides nothing; nonzero means 'may attend', whatever its value.

Must fail: masks
"""
PATCH = [
    ('        keep = keep & (m[:, :, rows, cols] != 0)                # (B|1, H|1, L_q, W)',
     '        bias = m[:, :, rows, cols].to(work)  # added to the scores'),
    ('    s = s.masked_fill(~keep, float("-inf"))',
     '    s = s.masked_fill(~keep, float("-inf"))\n    if mask is not None:\n        s = s + bias'),
]
