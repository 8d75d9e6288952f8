"""the causal loop over key blocks stops one block early: for each tile of block_size queries, the key block holding the last key its last row may see (the diagonal block) is skipped.

The mutant tiles queries with block_size as FlashAttention does (a tile of rows shares one loop over
key blocks), expressed on the reference's loop as a per-row cut: rows of query tile t see no key at or
past (n_t - 1) * block_size, where n_t = ceil(min(last_t + 1, L_k) / block_size) is the number of key
blocks that tile needs and last_t the last key visible to its last row. With one query tile
(L_q <= block_size) this is the loop over key blocks ending one block early.

Must fail: causal
"""
PATCH = [("    rows = np.arange(L_q)[:, None]\n",
          "    rows = np.arange(L_q)[:, None]\n"
          "    tile_last = np.minimum((rows // block_size + 1) * block_size, L_q) - 1 + offset\n"
          "    cut = ((np.minimum(tile_last + 1, L_k) + block_size - 1) // block_size - 1) * block_size\n"),
         ("s = np.where(cols > rows + offset, -np.inf, s)",
          "s = np.where((cols > rows + offset) | (cols >= cut), -np.inf, s)")]
