"""forward(..., use_cache=False) attended over the cached tokens too (it did not write them), instead of attending causally over x alone.

Must fail: no_cache_output
"""
PATCH = [("        if use_cache:\n            if self.k_cache is not None:\n",
          "        if True:\n            if self.k_cache is not None:\n"),
         ("            self.k_cache, self.v_cache = k, v\n",
          "            if use_cache:\n                self.k_cache, self.v_cache = k, v\n")]
