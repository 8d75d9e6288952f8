"""the padding mask overwrote the caller's token ids in place (e.g. `seq.masked_fill_(seq == pad_token, -1)`): build the mask in a new tensor and leave seq unchanged.

Must fail: seq_unchanged
"""
PATCH = [("    keep = seq != pad_token                                  # (B, L) real tokens",
          "    keep = seq != pad_token                                  # (B, L) real tokens\n    seq.masked_fill_(~keep, -1)")]
