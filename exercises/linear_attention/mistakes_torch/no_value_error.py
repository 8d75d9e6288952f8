"""inputs whose shapes disagree (or that are not 4-D) were not rejected with a ValueError.

Must fail: bad_shapes
"""
PATCH = [('            raise ValueError(f"{name} must be 4-D (B, H, L, d), got shape {tuple(a.shape)}")', "            pass"),
         ('        raise ValueError(f"query, key and value must share (B, H, L): got {tuple(query.shape)}, "\n'
          '                         f"{tuple(key.shape)}, {tuple(value.shape)}")', "        pass"),
         ('        raise ValueError(f"query and key must share d_k: got {query.shape[-1]} and {key.shape[-1]}")', "        pass")]
