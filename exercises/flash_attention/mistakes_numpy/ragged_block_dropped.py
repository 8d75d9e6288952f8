"""the key loop stopped before a ragged last block (range(0, L_k - block_size + 1, block_size)): the last L_k % block_size keys were never visited.

Must fail: ragged_blocks
"""
PATCH = [('for ks in range(0, max(k_end, 0), block_size):', 'for ks in range(0, max(k_end - block_size + 1, 0), block_size):')]
