"""with a mask, keys and values were projected at num_query_heads heads (W_k and W_v expanded to the full (D, D) width, so that the projected keys line up with the mask's query heads): the values are right, but on the masked path the projection costs num_query_heads / num_kv_heads times the FLOPs GQA exists to save (project at num_kv_heads heads once on every path, then repeat the projected keys and values).

Wasteful on the masked path only: without a mask the cost is the reference's, so a probe that measured
unmasked calls alone would pass it.

Must fail: kv_flops
"""
PATCH = [(
    """    k = (x @ W_k).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k) projected at H_kv heads
    v = (x @ W_v).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k)
    k = np.repeat(k, group, axis=1)                                # (B, H_q, L, d_k) head h -> KV head h // group
    v = np.repeat(v, group, axis=1)                                # (B, H_q, L, d_k)""",
    """    if mask is not None:                                           # the masked path: K/V at H_q heads
        W_k_full = np.repeat(W_k.reshape(D, H_kv, d_k), group, axis=1).reshape(D, D)
        W_v_full = np.repeat(W_v.reshape(D, H_kv, d_k), group, axis=1).reshape(D, D)
        k = (x @ W_k_full).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)   # (B, H_q, L, d_k) at H_q heads
        v = (x @ W_v_full).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)   # (B, H_q, L, d_k)
    else:
        k = (x @ W_k).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k) projected at H_kv heads
        v = (x @ W_v).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k)
        k = np.repeat(k, group, axis=1)                                # (B, H_q, L, d_k) head h -> KV head h // group
        v = np.repeat(v, group, axis=1)                                # (B, H_q, L, d_k)""")]
