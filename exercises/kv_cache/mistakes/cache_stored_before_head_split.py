"""the cache holds the projected keys/values before the head split, as (B, T, D), instead of (B, H, T, d_k); the attention itself is right.

Must fail: cache_shapes, cache_contents
"""
PATCH = [("k = np.concatenate([self.k_cache, k], axis=2) ",
          "k = np.concatenate([self._split_heads(self.k_cache), k], axis=2) "),
         ("v = np.concatenate([self.v_cache, v], axis=2) ",
          "v = np.concatenate([self._split_heads(self.v_cache), v], axis=2) "),
         ("            self.k_cache, self.v_cache = k, v\n",
          "            self.k_cache, self.v_cache = (t.transpose(0, 2, 1, 3).reshape(B, t.shape[2], D) for t in (k, v))\n")]
