"""a query row whose keys are all masked gave NaN (its scores are all -inf: with that max, exp(-inf - (-inf)) is NaN; shifted by 0 instead, the exponentials sum to 0 and the division is 0/0) instead of a zero output row.

Must fail: fully_masked_rows
"""
PATCH = [("att = np.divide(e, s, out=np.zeros_like(e), where=s > 0)", "att = e / s")]
