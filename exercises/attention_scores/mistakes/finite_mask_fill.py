"""a query row whose keys are all masked got uniform weights instead of zeros, as when masked scores are filled with a finite number (e.g. -1e9 or the dtype's minimum) instead of -inf, or such a row's scores are reset to 0.

Must fail: fully_masked_rows, hidden_cases
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)", "scores = np.where(allowed, scores, -1e9)")]
