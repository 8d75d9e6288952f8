"""kv_len was ignored: the causal mask is always the square (seq_len, seq_len) triangle, where with a KV cache it must be (seq_len, kv_len), aligned bottom-right.

Must fail: causal_kv_len
"""
PATCH = [("offset = kv_len - seq_len", "offset, kv_len = 0, seq_len")]
