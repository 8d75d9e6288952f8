"""the logits were clipped (to [-80, 80]) instead of shifted by their maximum: clipping changes every slice with a logit outside the range (large logits saturate to equal weights) and an all -inf slice becomes uniform instead of zeros (shift by the max: softmax is shift-invariant, clipping is not).

Must fail: large_logits, dtype_max, all_neg_inf
"""
PATCH = [("e = np.exp(x - m)", "e = np.exp(np.clip(x, -80, 80))")]
