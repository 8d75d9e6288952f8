"""the padding mask overwrote the caller's token ids in place (e.g. `seq[...] = seq != pad_token`): build the mask in a new array and leave seq unchanged.

Must fail: seq_unchanged
"""
PATCH = [("    keep = seq != pad_token                                  # (B, L) real tokens",
          "    keep = seq != pad_token                                  # (B, L) real tokens\n    seq[...] = keep"),
         ("padding = create_padding_mask(seq, pad_token) ", "padding = create_padding_mask(seq.copy(), pad_token) ")]
