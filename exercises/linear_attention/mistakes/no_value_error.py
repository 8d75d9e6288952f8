"""inputs whose shapes disagree (or that are not 4-D) were not rejected with a ValueError.

Must fail: bad_shapes
"""
PATCH = [('            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {np.shape(a)}")', "            pass"),
         ('        raise ValueError(f"query, key and value must share (B, H, L): got {query.shape}, {key.shape}, {value.shape}")', "        pass"),
         ('        raise ValueError(f"query and key must share d_k: got {query.shape[-1]} and {key.shape[-1]}")', "        pass")]
