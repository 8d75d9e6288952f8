"""with a mask that differs across the batch, batch item b's mask was applied to the query heads of KV head b in every batch item (silently when B == num_kv_heads; other batch sizes above 1 raise), as when a (B, 1, L, L) or (B, 1, 1, L) mask meets grouped 5-D scores (B, num_kv_heads, group, L, L) without a reshape and its batch axis lines up with the KV-head axis. Give the mask a group axis (mask[:, :, None] for a 4-D mask) before applying it to 5-D scores, or expand the keys and values to num_query_heads heads.

Must fail: masks, fully_masked_rows

Source: https://github.com/ml-explore/mlx-lm/pull/1903
The pull request shows mlx-lm's Gemma2 attention reshaping the queries to (B, n_kv_heads, repeats, L, head_dim) while the mask stays (B, 1, N, S), so broadcasting aligns the mask's batch axis with the KV-head axis: usually a ValueError, silently wrong when the batch size equals n_kv_heads; it reshapes the mask and adds a regression test.
"""
PATCH = [("    k = np.repeat(k, group, axis=1)                                # (B, H_q, L, d_k) head h -> KV head h // group\n"
          "    v = np.repeat(v, group, axis=1)                                # (B, H_q, L, d_k)\n",
          "    if group > 1:  # grouped 5-D layout: query heads (B, H_kv, group, L, d_k) against one KV head each\n"
          "        q, k, v = q.reshape(B, H_kv, group, L, d_k), k[:, :, None], v[:, :, None]\n"),
         ("    att = q @ k.transpose(0, 1, 3, 2) / ", "    att = q @ np.swapaxes(k, -1, -2) / "),
         ("    y = att @ v                                                    # (B, H_q, L, d_k)\n",
          "    y = (att @ v).reshape(B, H_q, L, d_k)                          # (B, H_q, L, d_k)\n")]
