"""a chunk of several new tokens is handled by re-projecting the keys and values of every token seen so far (the whole history of inputs, kept for it), and only a single new token uses the cache: the values are right, but appending a chunk costs O(T*D^2) instead of O(L_new*D^2 + T*D) (project only the new tokens, whatever their number, and append them to the cache).

Wasteful on the chunked-prefill path only: a single-token decode step costs what the reference's does,
so a probe that measured decode steps alone would pass it.

Must fail: decode_complexity
"""
PATCH = [(
    """        if use_cache:
            if self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)
                v = np.concatenate([self.v_cache, v], axis=2)      # (B, H, T + L, d_k)
            self.k_cache, self.v_cache = k, v""",
    """        if use_cache:
            seen = getattr(self, "_seen", None) if self.k_cache is not None else None
            if seen is not None and L > 1:                         # a chunk: re-project the whole history
                everything = np.concatenate([seen, x], axis=1)     # (B, T + L, D)
                k = self._split_heads(everything @ W_k)            # (B, H, T + L, d_k) re-projected
                v = self._split_heads(everything @ W_v)            # (B, H, T + L, d_k)
            elif self.k_cache is not None:
                k = np.concatenate([self.k_cache, k], axis=2)      # (B, H, T + L, d_k)
                v = np.concatenate([self.v_cache, v], axis=2)      # (B, H, T + L, d_k)
            self._seen = x if self.k_cache is None else np.concatenate([self._seen, x], axis=1)
            self.k_cache, self.v_cache = k, v""")]
