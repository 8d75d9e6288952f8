"""block_size < 1 was not rejected with a ValueError.

Must fail: bad_block_size
"""
PATCH = [('        raise ValueError(f"block_size must be an integer >= 1, got {block_size!r}")', '        block_size = max(abs(int(block_size)), 1)')]
