"""forward(..., use_cache=False) still appended its keys/values to the cache (its output is right, but the cache now holds tokens that are not part of the sequence).

Must fail: no_cache_state
"""
PATCH = [("        if use_cache:\n",
          "        if not use_cache:\n"
          "            self.k_cache = k if self.k_cache is None else torch.cat([self.k_cache, k], dim=2)\n"
          "            self.v_cache = v if self.v_cache is None else torch.cat([self.v_cache, v], dim=2)\n"
          "        if use_cache:\n")]
