"""the masked scores were filled with +inf (-float('-inf'), a doubled minus sign) instead of -inf: every row with a masked key becomes inf / inf, NaN at the masked keys and 0 elsewhere.

Must fail: mask_2d, mask_padding, mask_4d

Source: https://github.com/lucidrains/memory-compressed-attention/issues/2
The issue points out that the causal mask was filled with -float('-inf') (that is +inf), which makes softmax produce NaN; the maintainer fixed the sign.
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)", "scores = np.where(allowed, scores, -(-np.inf))")]
