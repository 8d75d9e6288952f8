"""the combined mask hides padded query rows instead of padded key columns: padding applies to keys (the last axis), for every query.

Must fail: combined_mask, hidden_masks
"""
PATCH = [("padding = create_padding_mask(seq, pad_token)            # (B, 1, 1, L)",
          "padding = np.swapaxes(create_padding_mask(seq, pad_token), -1, -2)")]
