"""a numeric mask was added to the scores as a bias (scores + mask) instead of excluding the keys where it is 0: a 0/1 mask then masks nothing (bool masks were handled right).

Must fail: numeric_mask
"""
PATCH = [("att = np.where(np.asarray(mask) != 0, att, -np.inf)",
          "att = np.where(mask, att, -np.inf) if np.asarray(mask).dtype == bool else att + np.asarray(mask).astype(att.dtype)")]
