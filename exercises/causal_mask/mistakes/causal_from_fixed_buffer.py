"""the causal mask was sliced from a lower-triangular buffer precomputed for a fixed block size (32 here), so any kv_len beyond the buffer comes back with too few columns (and rows): build the mask for the lengths asked for.

Must fail: causal_kv_len

Source: https://github.com/karpathy/nanoGPT/issues/473
The issue shows nanoGPT's causal bias registered once as torch.tril(torch.ones(block_size, block_size)) and sliced [:T, :T], which for T = 16 > block_size = 8 returns an 8 x 8 mask instead of 16 x 16.
"""
PATCH = [("    offset = kv_len - seq_len\n",
          "    offset = kv_len - seq_len\n"
          "    bias = np.tril(np.ones((32, 32), dtype=bool))           # precomputed for block_size = 32\n"
          "    return bias[max(kv_len - seq_len, 0):kv_len, :kv_len][None, None, :, :]\n")]
