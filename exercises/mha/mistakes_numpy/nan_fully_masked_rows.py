"""a query row whose keys are all masked gave NaN (0/0) instead of a zero output row.

Must fail: fully_masked_rows
"""
PATCH = [("return np.divide(e, t, out=np.zeros_like(e), where=t > 0)", "return e / t")]
