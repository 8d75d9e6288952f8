"""the cache was stored as (B, T, H, d_k), heads after tokens; k_cache and v_cache are (B, H, T, d_k).

Must fail: cache_shapes
"""
PATCH = [('            self.k_cache, self.v_cache = k, v\n', '            self.k_cache, self.v_cache = k.transpose(0, 2, 1, 3), v.transpose(0, 2, 1, 3)\n'), ('k = np.concatenate([self.k_cache, k], axis=2)', 'k = np.concatenate([self.k_cache.transpose(0, 2, 1, 3), k], axis=2)'), ('v = np.concatenate([self.v_cache, v], axis=2)', 'v = np.concatenate([self.v_cache.transpose(0, 2, 1, 3), v], axis=2)')]
