"""the denominator left out the query: it was sum_j sum_c phi(k_j)_c (the sum of z) instead of phi(q_i)^T z, so the rows are not normalised by their own attention weights.

Must fail: values
"""
PATCH = [("        den = phi_q @ z[..., None]                              # (B, H, L, 1)",
          "        den = z.sum(axis=-1)[..., None, None]                   # (B, H, 1, 1)")]
