"""kv_len < seq_len was accepted silently: the queries cannot be the last seq_len of kv_len positions, so create_causal_mask must raise ValueError.

Must fail: kv_len_too_short
"""
PATCH = [("    if kv_len < seq_len:\n        raise ValueError", "    if False:\n        raise ValueError")]
