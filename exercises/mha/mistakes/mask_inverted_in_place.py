"""the caller's bool mask was changed in place (e.g. inverted there: mask.bool() returns the same tensor for a bool mask, and logical_not_() then changes it); the attention itself is right.

Must fail: inputs_unchanged
"""
PATCH = [("keep = mask != 0 ", "keep = mask.bool(); keep.logical_not_(); keep = ~keep ")]
