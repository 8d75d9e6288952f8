"""keys where the mask is 0 still got weight and a 0/3 mask sharpened the kept scores: the outputs are those of scores multiplied by the mask, where a hidden key scores 0 and keeps a share of the weight (a row whose window is all masked averages its window's values). Where the mask is 0 the key must get no weight (-inf before the softmax); any nonzero value means 'may attend'.

Must fail: masks, fully_masked_rows

Source: https://github.com/georg-wolflein/good-features/pull/1
The pull request shows the ABMIL attention multiplying its scores by a 0/1 mask before the softmax, so masked entries become 0 and still get weight, and masks them with -inf instead; the author confirmed the bug and merged the fix.
"""
PATCH = [
    ("        keep = keep & (band[:, :, np.arange(L_q)[:, None], idx] != 0)  # (B, H, L_q, W)",
     "        factor = band[:, :, np.arange(L_q)[:, None], idx].astype(work)  # (B, H, L_q, W) multiplies the scores"),
    ("    s = np.where(keep, s, -np.inf)",
     "    if mask is not None:\n        s = s * factor                                          # a hidden key scores 0, it is not removed\n    s = np.where(keep, s, -np.inf)"),
]
