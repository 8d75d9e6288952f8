"""keys and values were projected to a single head of width d_k (the first d_k columns of W_k and W_v, multi-query attention) whatever num_kv_heads: every query head shares KV head 0 and the other KV columns of the weights are never used.

Must fail: values, head_mapping

Source: https://github.com/lucidrains/MEGABYTE-pytorch/issues/13
The issue asks why Attention builds to_kv = nn.Linear(dim, dim_head * 2), one key/value head, instead of inner_dim * 2; the author explains it was single-KV-head attention and switched to the full set of heads.
"""
PATCH = [("k = (x @ W_k).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k) projected at H_kv heads",
          "k = (x @ W_k[:, :d_k]).view(B, L, 1, d_k).transpose(1, 2).expand(B, H_kv, L, d_k)  # one KV head"),
         ("v = (x @ W_v).view(B, L, H_kv, d_k).transpose(1, 2)  # (B, H_kv, L, d_k)",
          "v = (x @ W_v[:, :d_k]).view(B, L, 1, d_k).transpose(1, 2).expand(B, H_kv, L, d_k)")]
