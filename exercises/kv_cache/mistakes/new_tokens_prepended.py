"""the new keys and values were put in front of the cached ones (concatenate([new, cache])): the cache is in token order, the new tokens appended at the end.

Must fail: cache_contents
"""
PATCH = [('k = np.concatenate([self.k_cache, k], axis=2)', 'k = np.concatenate([k, self.k_cache], axis=2)'), ('v = np.concatenate([self.v_cache, v], axis=2)', 'v = np.concatenate([v, self.v_cache], axis=2)')]
