"""keys and values are cut to the last 32 tokens (or the L new ones, if more) before attending and caching (a sliding-window attention): each new token attends to every token seen so far, and the cache holds them all.

Must fail: long_sequence
"""
PATCH = [('            self.k_cache, self.v_cache = k, v\n',
          '            k, v = k[:, :, -max(32, L):], v[:, :, -max(32, L):]\n            self.k_cache, self.v_cache = k, v\n')]
