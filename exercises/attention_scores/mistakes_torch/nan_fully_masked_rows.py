"""a query row whose keys are all masked gave NaN (its scores are all -inf: with that max, exp(-inf - (-inf)) is NaN; shifted by 0 instead, the exponentials sum to 0 and the division is 0/0) instead of zero weights and a zero output row.

Must fail: fully_masked_rows
"""
PATCH = [("return torch.where(s > 0, e / safe, torch.zeros_like(e))", "return e / s")]
