"""clear_cache() resets k_cache but not v_cache, so the next sequence's values are appended to the stale ones.

Must fail: clear_cache
"""
PATCH = [("                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)\n"
          "                v = np.concatenate([self.v_cache, v], axis=2)      # (B, H, T + L, d_k)\n",
          "                k = np.concatenate([self.k_cache, k], axis=2)\n"
          "            if self.v_cache is not None:\n"
          "                v = np.concatenate([self.v_cache, v], axis=2)\n"),
         ("(start a new sequence).\"\"\"\n        self.k_cache = None\n        self.v_cache = None\n",
          "(start a new sequence).\"\"\"\n        self.k_cache = None\n")]
