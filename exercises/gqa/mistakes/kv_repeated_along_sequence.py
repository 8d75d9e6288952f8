"""keys and values were repeated along the sequence axis (x repeated group times before the K/V projection, then viewed as num_query_heads heads) instead of along the head axis: each query head must see its group's KV head, computed once per token.

Must fail: values, kv_flops
"""
PATCH = [("k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2)", "k = (x.repeat(1, group, 1) @ W_k).view(B, L, H_q, d_k).transpose(1, 2)"),
         ("v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2)", "v = (x.repeat(1, group, 1) @ W_v).view(B, L, H_q, d_k).transpose(1, 2)"),
         ("k = k.repeat_interleave(group, dim=1) ", "# "),
         ("v = v.repeat_interleave(group, dim=1) ", "# ")]
