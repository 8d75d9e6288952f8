"""the mask was applied with the opposite polarity: nonzero / True means 'may attend', 0 / False means 'masked out'.

Must fail: padding_mask, causal_mask
"""
PATCH = [("keep = mask != 0", "keep = mask == 0")]
