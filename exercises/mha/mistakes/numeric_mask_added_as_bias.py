"""a numeric (non-bool) mask was added to the scores as an additive bias instead of selecting keys: nonzero entries may attend and zero entries may not, whatever their value.

Must fail: numeric_mask
"""
PATCH = [("    if mask is not None:\n        keep = mask != 0 ",
          "    if mask is not None and mask.dtype != torch.bool:\n"
          "        att = F.softmax(att + mask, dim=-1)\n"
          "    elif mask is not None:\n        keep = mask != 0 ")]
