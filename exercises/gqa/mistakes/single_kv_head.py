"""every query head used KV head 0 (the keys and values of the first d_k columns of W_k and W_v) whatever num_kv_heads, e.g. K and V projected to a single head of width d_k as in multi-query attention, or a KV head index that is always 0: the other KV heads are never attended.

Must fail: values, head_mapping

Source: https://github.com/lucidrains/MEGABYTE-pytorch/issues/13
The issue asks why Attention builds to_kv = nn.Linear(dim, dim_head * 2), one key/value head, instead of inner_dim * 2; the author explains it was single-KV-head attention and switched to the full set of heads.
"""
PATCH = [("k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k) projected at H_kv heads",
          "k = (x @ W_k[:, :d_k]).view(B, L, 1, d_k).transpose(1, 2).expand(B, H_kv, L, d_k)  # one KV head"),
         ("v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k)",
          "v = (x @ W_v[:, :d_k]).view(B, L, 1, d_k).transpose(1, 2).expand(B, H_kv, L, d_k)")]
