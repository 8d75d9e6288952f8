"""the query heads of each group were summed into one query per KV head (an einsum that contracts the group axis, "b g h n d, b h s d -> b h n s") instead of each query head attending on its own with its group's KV head: all heads of a group get the same weights.

Must fail: values, head_mapping

Source: https://github.com/fkodom/grouped-query-attention-pytorch/issues/5
The issue notes that scaled_dot_product_gqa "reduces the queries to the number of keys and values" instead of expanding the keys and values as LLaMA 2 does; the author confirmed the bug and fixed it.
"""
PATCH = [("q = (x @ W_q).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)    # (B, H_q, L, d_k)",
          "q = (x @ W_q).reshape(B, L, H_q, d_k).transpose(0, 2, 1, 3)    # (B, H_q, L, d_k)\n"
          "    q = q.reshape(B, H_kv, group, L, d_k).sum(axis=2).repeat(group, axis=1)  # group's queries summed")]
