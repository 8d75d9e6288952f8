"""the cache offset has the wrong sign (j <= i - (kv_len - seq_len)): with a cache, query i is at position kv_len - seq_len + i and must see every key up to there, not fewer keys than without a cache.

Must fail: causal_kv_len
"""
PATCH = [("offset = kv_len - seq_len", "offset = seq_len - kv_len")]
