"""the mask was applied with the opposite polarity: nonzero/True means 'may attend', but those were the positions removed.

Must fail: mask_2d
"""
PATCH = [("allowed = np.asarray(mask) != 0", "allowed = np.asarray(mask) == 0")]
