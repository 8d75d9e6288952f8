"""only mask entries equal to 1 were allowed to attend (`mask == 1`): the contract says any nonzero (or True) entry may attend, so a mask of 0 / 3 or 0.5 / -2.0 hides keys it should keep.

Must fail: masks
"""
PATCH = [("np.where(np.asarray(mask) != 0, att, -np.inf)", "np.where(np.asarray(mask) == 1, att, -np.inf)")]
