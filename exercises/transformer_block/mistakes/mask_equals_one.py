"""only mask entries equal to 1 were allowed to attend (`mask == 1`): the contract says any nonzero (or True) entry may attend, so a mask of 0 / 3 or 0.5 / -2.0 hides keys it should keep.

Must fail: numeric_mask
"""
PATCH = [("keep = mask != 0", "keep = mask == 1")]
