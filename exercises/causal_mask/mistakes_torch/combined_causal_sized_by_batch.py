"""the causal part of the combined mask was built from seq.shape[0], the batch size, instead of seq.shape[1], the sequence length (a batch-first tensor read as sequence-first): the (B, B) triangle does not match the (L, L) scores and raises or masks the wrong positions.

Must fail: combined_mask

Source: https://github.com/pytorch/pytorch/issues/115472
The issue shows nn.Transformer(..., batch_first=True) called with generate_square_subsequent_mask(x.shape[0]), the batch size, which fails with "shape '[1, 1, 52, 52]' is invalid for input of size 4096"; the maintainers point out the mask must be sized by the sequence length, dimension 1.
"""
PATCH = [("causal = create_causal_mask(L)                           # (1, 1, L, L)",
          "causal = create_causal_mask(B)                           # (1, 1, B, B)")]
