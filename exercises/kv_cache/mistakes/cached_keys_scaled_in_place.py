"""the keys were scaled by 1/sqrt(d_k) in place after they were cached, so the cached keys are scaled again at every call; scale the scores (or a copy), never the cache.

Must fail: prefill_decode
"""
PATCH = [('att = q @ k.transpose(0, 1, 3, 2) / math.sqrt(self.d_k)', 'k *= 1.0 / math.sqrt(self.d_k)\n        att = q @ k.transpose(0, 1, 3, 2)')]
