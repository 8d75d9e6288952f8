"""window < 1 was not rejected with a ValueError.

Must fail: bad_window
"""
PATCH = [
    ('        raise ValueError(f"window must be an integer >= 1, got {window!r}")',
     '        window = max(abs(int(window)), 1)'),
]
