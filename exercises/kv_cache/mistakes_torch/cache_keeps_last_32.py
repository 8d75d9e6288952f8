"""the cache kept only the last 32 tokens (a sliding-window rolling buffer): the cache holds every token seen so far, and each new token attends to all of them.

Must fail: long_sequence
"""
PATCH = [('            self.k_cache, self.v_cache = k, v\n', '            self.k_cache, self.v_cache = k[:, :, -32:], v[:, :, -32:]\n')]
