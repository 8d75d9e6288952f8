"""keys and values were projected at num_query_heads heads (W_k and W_v expanded to the full (D, D) width before projecting, or each query head projecting its KV head's columns again): the values are right, but the projection costs num_query_heads / num_kv_heads times the FLOPs GQA exists to save (project at num_kv_heads heads once, then repeat the projected keys and values).

Must fail: kv_flops
"""
PATCH = [(
    """    k = (x @ W_k).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k) projected at H_kv heads
    v = (x @ W_v).reshape(B, L, H_kv, d_k).transpose(0, 2, 1, 3)   # (B, H_kv, L, d_k)
    k = np.repeat(k, group, axis=1)                                # (B, H_q, L, d_k) head h -> KV head h // group
    v = np.repeat(v, group, axis=1)                                # (B, H_q, L, d_k)""",
    """    W_k_full = np.repeat(W_k.reshape(D, H_kv, d_k), group, axis=1).reshape(D, D)
    W_v_full = np.repeat(W_v.reshape(D, H_kv, d_k), group, axis=1).reshape(D, D)
    k = (x @ W_k_full).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)   # (B, H_q, L, d_k) projected at H_q heads
    v = (x @ W_v_full).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)   # (B, H_q, L, d_k)""")]
