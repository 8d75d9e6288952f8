"""the causal loop over key blocks stops one block early: the block holding the last visible keys (the diagonal block) is skipped.

Must fail: causal
"""
PATCH = [("for ks in range(0, max(k_end, 0), block_size):", "for ks in range(0, max(k_end - block_size if causal else k_end, 0), block_size):")]
