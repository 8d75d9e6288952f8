"""the padding mask hides padded queries, shape (B, 1, L, 1), instead of padded keys, (B, 1, 1, L): broadcast over the scores, every query still attends to the padded keys (a padding mask removes keys from every query's view; padded query rows are dropped later, by the loss).

Must fail: padding_mask, combined_mask, hidden_masks
"""
PATCH = [("return keep[:, None, None, :]", "return keep[:, None, :, None]")]
