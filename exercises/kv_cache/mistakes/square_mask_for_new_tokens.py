"""the causal mask was built square for the new tokens only ((L_new, L_new), sliced from a (max_len, max_len) triangle) instead of (L_new, T + L_new) over all keys: a single decoding step broadcasts it and works, but a multi-token chunk after a cache raises or is masked wrong.

Must fail: chunked_prefill

Source: https://github.com/rasbt/LLMs-from-scratch/pull/697
The pull request shows the cached attention slicing mask_bool = self.mask.bool()[:num_tokens, :num_tokens], which is (1, 1) when decoding, while the mask must be (num_tokens, num_tokens_K); the same misapplied square mask broke meta-llama/llama (issue #899).
"""
PATCH = [("allowed = np.arange(S)[None, :] <= np.arange(L)[:, None] + T   # (L, S) bottom-right causal",
          "allowed = np.arange(L)[None, :] <= np.arange(L)[:, None]       # (L, L) for the new tokens only")]
