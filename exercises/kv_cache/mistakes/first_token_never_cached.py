"""the first token's keys and values were never written into the cache (its slot stays zero), so every later call attends to a fake all-zero first token instead of the real one; the call that fills the cache is unaffected.

Must fail: prefill_decode, cache_contents

Source: https://github.com/TrenTorch/TrenTorch/pull/192
The pull request fixes a KV cache whose prefill path never wrote the first token's real K, V (only advance() ran), "permanently leaving position 0 as zeros", so every generated token attended to a fake first token.
"""
PATCH = [("            self.k_cache, self.v_cache = k, v\n",
          "            first = self.k_cache is None\n"
          "            self.k_cache, self.v_cache = k.copy(), v.copy()\n"
          "            if first:\n"
          "                self.k_cache[:, :, 0] = 0                          # position 0 never written\n"
          "                self.v_cache[:, :, 0] = 0\n")]
