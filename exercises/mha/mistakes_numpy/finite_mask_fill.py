"""a query row whose keys are all masked got uniform weights (the mean of the values) instead of 0, as when masked scores are filled with a finite number (e.g. -1e9 or the dtype's minimum) instead of -inf, or such a row's scores are reset to 0.

Must fail: fully_masked_rows
"""
PATCH = [("att = np.where(np.asarray(mask) != 0, att, -np.inf)", "att = np.where(np.asarray(mask) != 0, att, -1e9)")]
