"""the cache keeps batch row 0 only (k[:1], v[:1]) and broadcasts it over the batch at the next call ('every sequence shares the prompt'): each sequence of a batch has its own keys and values, so the cache is (B, H, T, d_k).

Must fail: batch, cache_shapes
"""
PATCH = [("                k = torch.cat([self.k_cache, k], dim=2)            # (B, H, T + L, d_k)\n"
          "                v = torch.cat([self.v_cache, v], dim=2)            # (B, H, T + L, d_k)\n"
          "            self.k_cache, self.v_cache = k, v\n",
          "                k = torch.cat([self.k_cache.expand(B, -1, -1, -1), k], dim=2)\n"
          "                v = torch.cat([self.v_cache.expand(B, -1, -1, -1), v], dim=2)\n"
          "            self.k_cache, self.v_cache = k[:1], v[:1]\n")]
