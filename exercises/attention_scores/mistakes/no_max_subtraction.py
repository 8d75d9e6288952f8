"""exp was taken of the raw scores, without subtracting each row's maximum first, so large scores overflow to inf and the weights to NaN.

Must fail: large_logits, hidden_cases
"""
PATCH = [("e = np.exp(scores - m)", "e = np.exp(scores)")]
