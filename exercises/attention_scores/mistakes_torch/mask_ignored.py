"""the mask was ignored: masked keys still received weight.

Must fail: mask_2d
"""
PATCH = [("allowed = torch.as_tensor(mask) != 0", "allowed = torch.ones_like(torch.as_tensor(mask), dtype=torch.bool)")]
