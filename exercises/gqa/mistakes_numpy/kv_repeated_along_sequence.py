"""keys and values were repeated along the sequence axis (np.repeat(..., axis=2)) instead of the head axis (axis=1): each query head must see its group's KV head, token by token.

Must fail: values, head_mapping
"""
PATCH = [("k = np.repeat(k, group, axis=1)", "k = np.repeat(k, group, axis=2).reshape(B, H_q, L, d_k)"),
         ("v = np.repeat(v, group, axis=1)", "v = np.repeat(v, group, axis=2).reshape(B, H_q, L, d_k)")]
