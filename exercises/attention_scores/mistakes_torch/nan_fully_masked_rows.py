"""a query row whose keys are all masked gave NaN (0/0) instead of zero weights and a zero output row.

Must fail: fully_masked_rows
"""
PATCH = [("return torch.where(s > 0, e / safe, torch.zeros_like(e))", "return e / s")]
