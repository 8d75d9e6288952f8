"""with a mask, keys and values were projected at num_query_heads heads (W_k and W_v expanded to the full (D, D) width, so that the projected keys line up with the mask's query heads): the values are right, but on the masked path the projection costs num_query_heads / num_kv_heads times the FLOPs GQA exists to save (project at num_kv_heads heads once on every path, then repeat the projected keys and values).

Wasteful on the masked path only: without a mask the cost is the reference's, so a probe that measured
unmasked calls alone would pass it.

Must fail: kv_flops
"""
PATCH = [(
    """    k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k) projected at H_kv heads
    v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k)
    k = k.repeat_interleave(group, dim=1)                # (B, H_q, L, d_k) head h -> KV head h // group
    v = v.repeat_interleave(group, dim=1)                # (B, H_q, L, d_k)""",
    """    if mask is not None:                                 # the masked path: K/V at H_q heads
        W_k_full = W_k.view(D, H_kv, d_k).repeat_interleave(group, dim=1).reshape(D, D)
        W_v_full = W_v.view(D, H_kv, d_k).repeat_interleave(group, dim=1).reshape(D, D)
        k = (x @ W_k_full).view(B, L, H_q, d_k).transpose(1, 2)  # (B, H_q, L, d_k) projected at H_q heads
        v = (x @ W_v_full).view(B, L, H_q, d_k).transpose(1, 2)  # (B, H_q, L, d_k)
    else:
        k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k) projected at H_kv heads
        v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k)
        k = k.repeat_interleave(group, dim=1)                # (B, H_q, L, d_k) head h -> KV head h // group
        v = v.repeat_interleave(group, dim=1)                # (B, H_q, L, d_k)""")]
