"""k_cache/v_cache expose a whole preallocated buffer (here 64 positions, zeros past the tokens seen) instead of only the T tokens seen, (B, H, T, d_k); the attention itself is right.

Must fail: cache_shapes
"""
PATCH = [("            if self.k_cache is not None:\n",
          "            T0 = self._len if self.k_cache is not None else 0\n"
          "            if self.k_cache is not None:\n"
          "                self.k_cache, self.v_cache = self.k_cache[:, :, :T0], self.v_cache[:, :, :T0]\n"),
         ("            self.k_cache, self.v_cache = k, v\n",
          "            self._len = k.shape[2]\n"
          "            pad = [(0, 0), (0, 0), (0, max(64 - k.shape[2], 0)), (0, 0)]\n"
          "            self.k_cache, self.v_cache = np.pad(k, pad), np.pad(v, pad)\n")]
