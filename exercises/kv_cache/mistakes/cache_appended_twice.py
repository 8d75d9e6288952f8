"""every new token was appended to the cache twice, so the cache grows by 2 L per call and every cached key is attended twice.

Must fail: prefill_decode
"""
PATCH = [("k = np.concatenate([self.k_cache, k], axis=2) ", "k = np.concatenate([self.k_cache, k, k], axis=2) "),
         ("v = np.concatenate([self.v_cache, v], axis=2) ", "v = np.concatenate([self.v_cache, v, v], axis=2) ")]
