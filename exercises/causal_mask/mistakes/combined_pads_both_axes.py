"""the combined mask hides padded queries as well as padded keys ((B, 1, L, 1) & (B, 1, 1, L)): a padded query row becomes all False, a row that sees nothing (its softmax is 0/0); the contract's combined mask is causal AND key padding only, and padded query rows are dropped later, by the loss.

Must fail: combined_mask, hidden_masks
"""
PATCH = [("return causal & padding                                  # (B, 1, L, L)",
          "return causal & padding & np.swapaxes(padding, -1, -2)")]
