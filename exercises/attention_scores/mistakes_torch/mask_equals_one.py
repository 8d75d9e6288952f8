"""only mask entries equal to 1 were allowed to attend (`mask == 1`): the contract says any nonzero (or True) entry may attend, so a mask of 0 / 3 or of 0.5 / -2.0 hides keys it should not.

Must fail: mask_numeric
"""
PATCH = [("allowed = torch.as_tensor(mask) != 0", "allowed = torch.as_tensor(mask) == 1")]
