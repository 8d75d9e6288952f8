"""a query row whose keys are all masked gave NaN (0/0) instead of a zero output row.

Must fail: fully_masked_rows
"""
PATCH = [("att = np.divide(e, s, out=np.zeros_like(e), where=s > 0)", "att = e / s")]
