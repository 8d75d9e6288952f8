"""the causal mask of each key block compared the query index with the key's index inside the block (0 .. block_size-1) instead of its absolute index ks + j: every block is masked as if it were the first, so queries see future keys of later blocks.

Must fail: causal

Source: https://github.com/trymirai/lalamo/pull/200
The pull request fixes a KV-cache attention mask built with tril/triu on suffix-local row indices instead of absolute query/key positions, which made multi-token causal decoding attend to different keys than sequential decoding.
"""
PATCH = [("cols = np.arange(ks, ks + s.shape[-1])[None, :]", "cols = np.arange(s.shape[-1])[None, :]")]
