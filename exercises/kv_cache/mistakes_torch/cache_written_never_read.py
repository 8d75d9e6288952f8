"""new keys/values were appended to the cache, but the new queries attend only over the new tokens: the cache is written and never read.

Must fail: prefill_decode, chunked_prefill
"""
PATCH = [("            self.k_cache, self.v_cache = k, v\n",
          "            self.k_cache, self.v_cache = k, v\n            k, v = k[:, :, -L:], v[:, :, -L:]\n")]
