"""with a kv_len, the mask is cut from a square (kv_len, kv_len) lower triangle (its last seq_len rows), so a few new queries over a long cache hold kv_len^2 values instead of seq_len * kv_len: the mask is right, but its memory grows with the square of the cache length (compare the query and key indices directly: a (seq_len, kv_len) comparison).

Wasteful on the kv_len path only: without a kv_len (and in create_combined_mask) the mask is the
reference's, so a probe that measured square masks alone would pass it.

Must fail: memory_scaling
"""
PATCH = [(
    """    mask = j <= i + offset                                   # (L_q, L_k) bottom-right aligned""",
    """    if offset:                                               # a cache: the last L_q rows of (L_k, L_k)
        mask = np.tril(np.ones((kv_len, kv_len)))[offset:] != 0
    else:
        mask = j <= i + offset                               # (L_q, L_k) bottom-right aligned""")]
