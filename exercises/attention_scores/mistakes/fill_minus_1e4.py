"""masked scores were filled with -1e4, which is not small enough: where real scores are far below -1e4 (large logits) the masked keys win the softmax; fill with -inf and give fully masked rows zeros.

Must fail: large_logits
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)", "scores = np.where(allowed, scores, -1e4)")]
