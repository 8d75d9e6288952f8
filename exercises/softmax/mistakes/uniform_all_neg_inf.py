"""a slice that is entirely -inf gave uniform weights 1/n instead of zeros (nothing may be attended there, so every probability must be 0).

Must fail: all_neg_inf
"""
PATCH = [("out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)",
          "out = np.divide(e, s, out=np.full_like(e, 1.0 / x.shape[axis]), where=s > 0)")]
