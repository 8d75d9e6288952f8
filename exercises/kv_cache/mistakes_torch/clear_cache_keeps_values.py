"""clear_cache() resets k_cache but not v_cache, so the next sequence's values are appended to the stale ones (the attention reads the last S values, so the outputs stay right while the value cache holds the old sequence: clear_cache must reset both).

Must fail: clear_cache
"""
PATCH = [("                k = torch.cat([self.k_cache, k], dim=2)            # (B, H, T + L, d_k)\n"
          "                v = torch.cat([self.v_cache, v], dim=2)            # (B, H, T + L, d_k)\n",
          "                k = torch.cat([self.k_cache, k], dim=2)\n"
          "            if self.v_cache is not None:\n"
          "                v = torch.cat([self.v_cache, v], dim=2)\n"),
         ("(start a new sequence).\"\"\"\n        self.k_cache = None\n        self.v_cache = None\n",
          "(start a new sequence).\"\"\"\n        self.k_cache = None\n"),
         ("        y = att @ v                                                # (B, H, L, d_k)\n",
          "        y = att @ v[:, :, -S:]\n")]
