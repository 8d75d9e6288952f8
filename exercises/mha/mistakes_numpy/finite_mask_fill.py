"""masked scores were filled with a finite number (e.g. -1e9 or the dtype's minimum) instead of -inf, so a query row whose keys are all masked gets uniform weights (the mean of the values) instead of 0.

Must fail: fully_masked_rows
"""
PATCH = [("att = np.where(np.asarray(mask) != 0, att, -np.inf)", "att = np.where(np.asarray(mask) != 0, att, -1e9)")]
