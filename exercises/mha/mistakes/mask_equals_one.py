"""only mask entries equal to 1 were allowed to attend (mask == 1); the contract says every nonzero (or True) entry may attend, so a numeric mask such as 0 / 3 loses its keys.

Must fail: numeric_mask
"""
PATCH = [("keep = mask != 0 ", "keep = mask == 1 ")]
