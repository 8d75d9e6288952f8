"""the combined mask applies the padding along the query axis (hiding padded query rows) instead of the key axis: padded keys must be hidden from every query.

Must fail: combined_mask, hidden_masks
"""
PATCH = [("padding = create_padding_mask(seq, pad_token)            # (B, 1, 1, L)",
          "padding = create_padding_mask(seq, pad_token).transpose(-1, -2)")]
