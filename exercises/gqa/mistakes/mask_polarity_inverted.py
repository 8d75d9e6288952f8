"""the mask was applied with the opposite polarity: nonzero/True means 'may attend', but those were the keys removed.

Must fail: masks
"""
PATCH = [("keep = mask != 0 ", "keep = mask == 0 ")]
