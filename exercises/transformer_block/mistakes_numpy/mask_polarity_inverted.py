"""the mask was applied with the opposite polarity: nonzero / True means 'may attend', 0 / False means 'masked out'.

Must fail: padding_mask, causal_mask
"""
PATCH = [("np.asarray(mask) != 0", "np.asarray(mask) == 0")]
