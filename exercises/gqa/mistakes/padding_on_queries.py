"""the padding mask was applied along the query axis instead of the key axis: padded keys must get no weight, whatever the query.

Must fail: masks
"""
PATCH = [("keep = mask != 0 ", "keep = (mask != 0).transpose(-1, -2) if mask.dim() == 4 and mask.shape[-2] == 1 else mask != 0 ")]
