"""the causal and padding masks were combined with OR instead of AND: a position may be attended only when both allow it.

Must fail: combined_mask
"""
PATCH = [("return causal & padding ", "return causal | padding ")]
