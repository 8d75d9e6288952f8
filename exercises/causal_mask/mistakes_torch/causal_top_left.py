"""the causal mask is aligned top-left (j <= i) instead of bottom-right (j <= i + kv_len - seq_len): with a cache, query i is the (kv_len - seq_len + i)-th position.

Must fail: causal_kv_len
"""
PATCH = [("offset = kv_len - seq_len", "offset = 0")]
