"""the 0/1 mask itself was added to the scores (scores + mask) instead of being turned into -inf (or a large negative number) at the masked keys: a masked key keeps almost all of its weight and an allowed key just gets +1.

Must fail: mask_2d, mask_padding, mask_4d

Source: https://github.com/jerryji1993/DNABERT/issues/102
The issue shows get_extended_attention_mask assigning (1.0 - mask) * -10000.0 to a misspelled variable and returning the raw 0/1 mask, which the attention then adds to its scores.
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)",
          "scores = scores + np.asarray(mask, dtype=scores.dtype)     # (..., L_q, L_k)")]
