"""the mask was applied with the opposite polarity: nonzero / True must mean "may attend".

Must fail: mask_2d
"""
PATCH = [("allowed = torch.as_tensor(mask) != 0", "allowed = torch.as_tensor(mask) == 0")]
