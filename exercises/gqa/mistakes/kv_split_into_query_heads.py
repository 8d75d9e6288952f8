"""the key and value projections were split into num_query_heads heads (as for the queries) instead of num_kv_heads heads of width d_k: their head width comes out H_kv * d_k / H_q, which does not match the queries, so anything but plain MHA raises.

Must fail: values, mqa

Source: https://github.com/Oneflow-Inc/libai/pull/556
A review comment on the Llama 3 port says its attention reshaped k and v with the query head count, so the later k/v computations do not line up: in GQA k and v have fewer heads than q.
"""
PATCH = [("k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k) projected at H_kv heads",
          "k = (x @ W_k).view(B, L, H_q, -1).transpose(1, 2)    # split with the query head count"),
         ("v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k)",
          "v = (x @ W_v).view(B, L, H_q, -1).transpose(1, 2)"),
         ("k = k.repeat_interleave(group, dim=1)                # (B, H_q, L, d_k) head h -> KV head h // group", "pass"),
         ("v = v.repeat_interleave(group, dim=1)                # (B, H_q, L, d_k)", "pass")]
