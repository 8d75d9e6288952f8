"""the mask was applied to the weights after the softmax (weights * mask) instead of to the scores before it: the masked keys' share is dropped without renormalising, so rows no longer sum to 1; set masked scores to -inf before the softmax.

Must fail: mask_2d, mask_padding, mask_4d
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)                 # (..., L_q, L_k)",
          "return (_softmax_last(scores) * allowed).astype(query.dtype, copy=False)")]
