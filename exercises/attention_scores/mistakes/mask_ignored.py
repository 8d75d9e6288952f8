"""the mask was ignored: masked keys still received weight.

Must fail: mask_2d
"""
PATCH = [("scores = np.where(allowed, scores, -np.inf)", "scores = scores")]
