"""query head h read KV head h // num_kv_heads instead of h // (num_query_heads // num_kv_heads): the divisor was the number of KV heads, not the group size, which is right only when the two are equal; other layouts share KV heads wrongly or index past the last one.

Must fail: values

Source: https://github.com/PSAL-POSTECH/ONNXim/pull/34
The pull request shows kv_head_idx = head_idx / _nkvh (divided by the number of KV heads) and lists its symptoms: heads collapsing onto one KV head, KV heads never read, or an out-of-range index, depending on the head ratio.
"""
PATCH = [("k = np.repeat(k, group, axis=1)                                # (B, H_q, L, d_k) head h -> KV head h // group",
          "k = k[:, np.arange(H_q) // H_kv]                               # head h -> KV head h // H_kv"),
         ("v = np.repeat(v, group, axis=1)                                # (B, H_q, L, d_k)",
          "v = v[:, np.arange(H_q) // H_kv]")]
