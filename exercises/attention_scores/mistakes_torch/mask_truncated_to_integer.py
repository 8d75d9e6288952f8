"""fractional mask entries such as 0.5 were read as 0 and hid a key that may attend, as when a float mask is converted to an integer (`.long()`, `.int()`) before comparing with 0 (the contract: any nonzero entry may attend; compare the mask itself with 0, or take `.bool()`).

Must fail: mask_numeric
"""
PATCH = [("allowed = torch.as_tensor(mask) != 0", "allowed = torch.as_tensor(mask).long() != 0")]
