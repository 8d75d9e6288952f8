"""the past keys and values were dropped on every call (the cache reset to None before the new tokens were appended), so the cache holds only the latest chunk and each call attends only to its own tokens instead of to everything seen so far.

Must fail: prefill_decode, cache_contents

Source: https://github.com/alex-hh/profam/pull/168
The pull request "fix kv caching bug" fixes generation code in which past_key_values was incorrectly being set to None (issue alex-hh/profam#155).
"""
PATCH = [("            if self.k_cache is not None:\n                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)\n",
          "            self.k_cache = self.v_cache = None                     # past dropped\n"
          "            if self.k_cache is not None:\n                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)\n")]
