"""the padding mask was computed for the first sequence only and broadcast over the batch (shape (1, 1, 1, L)), as if the batch size were 1: every other sequence is masked with sequence 0's pads; each sequence gets its own row, (B, 1, 1, L).

Must fail: padding_mask

Source: https://github.com/lucidrains/graph-transformer-pytorch/pull/2
The pull request says the original mask code "accidentally assumes batch size 1", letting the mask's batch dimension broadcast, and copies the mask per sample instead (fixed in commit db6b82e).
"""
PATCH = [("keep = seq != pad_token                                  # (B, L) real tokens",
          "keep = seq[:1] != pad_token                              # (1, L): sequence 0 only")]
