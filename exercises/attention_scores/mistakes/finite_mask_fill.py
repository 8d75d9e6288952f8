"""masked scores were filled with a finite number (e.g. -1e9 or the dtype's minimum) instead of -inf, so a query row whose keys are all masked gets uniform weights instead of zeros.

Must fail: fully_masked_rows, hidden_cases
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)", "scores = np.where(allowed, scores, -1e9)")]
