"""a float mask was converted to an integer (`.long()`, `.int()`) before comparing with 0: fractions such as 0.5 truncate to 0 and hide a key that may attend (the contract: any nonzero entry may attend; compare the mask itself with 0, or take `.bool()`).

Must fail: mask_numeric
"""
PATCH = [("allowed = torch.as_tensor(mask) != 0", "allowed = torch.as_tensor(mask).long() != 0")]
