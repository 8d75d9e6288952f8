"""the causal loop over key blocks stops one block early: for each tile of block_size queries, the key block holding the last key its last row may see (the diagonal block) is skipped.

The mutant tiles queries with block_size as FlashAttention does (a tile of rows shares one loop over
key blocks), expressed on the reference's loop as a per-row cut: rows of query tile t see no key at or
past (n_t - 1) * block_size, where n_t = ceil(min(last_t + 1, L_k) / block_size) is the number of key
blocks that tile needs and last_t the last key visible to its last row. With one query tile
(L_q <= block_size) this is the loop over key blocks ending one block early.

Must fail: causal
"""
PATCH = [("    rows = torch.arange(L_q).view(L_q, 1)\n",
          "    rows = torch.arange(L_q).view(L_q, 1)\n"
          "    tile_last = torch.clamp((rows // block_size + 1) * block_size, max=L_q) - 1 + offset\n"
          "    cut = ((torch.clamp(tile_last + 1, max=L_k) + block_size - 1) // block_size - 1) * block_size\n"),
         ("s = s.masked_fill(cols > rows + offset, float(\"-inf\"))",
          "s = s.masked_fill((cols > rows + offset) | (cols >= cut), float(\"-inf\"))")]
