"""every input token was kept and the keys and values of the whole sequence were re-projected at every step, so one decode step costs O(T * D^2) instead of O(T * D + D^2) (cache the projected keys and values, and project only the new tokens).

Must fail: decode_complexity
"""
PATCH = [('        k = self._split_heads(x @ W_k)                             # (B, H, L, d_k)\n        v = self._split_heads(x @ W_v)                             # (B, H, L, d_k)\n        if use_cache:\n            if self.k_cache is not None:\n                k = torch.cat([self.k_cache, k], dim=2)            # (B, H, T + L, d_k)\n                v = torch.cat([self.v_cache, v], dim=2)            # (B, H, T + L, d_k)\n            self.k_cache, self.v_cache = k, v',
          '        seq = torch.cat([self.tokens, x], dim=1) if use_cache and self.k_cache is not None else x\n        k = self._split_heads(seq @ W_k)                           # every token re-projected, every step\n        v = self._split_heads(seq @ W_v)\n        if use_cache:\n            self.tokens = seq\n            self.k_cache, self.v_cache = k, v')]
