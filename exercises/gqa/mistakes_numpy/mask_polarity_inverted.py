"""the mask was applied with the opposite polarity: nonzero / True must mean "may attend".

Must fail: masks
"""
PATCH = [("np.where(np.asarray(mask) != 0, att, -np.inf)", "np.where(np.asarray(mask) == 0, att, -np.inf)")]
