"""a query row whose keys are all masked came out NaN (a row of -inf scores: exp(-inf - (-inf)) is NaN, or, shifted by 0 instead, 0/0); such a row gets weights 0 and attention output 0.

Must fail: fully_masked_rows
"""
PATCH = [('e = np.exp(s - np.where(np.isfinite(m), m, 0))', 'e = np.exp(s - m)'), ('att = e / np.where(tot > 0, tot, 1)', 'att = e / tot')]
