"""causal=True was ignored: the window was two-sided (|i - j| < window) on the causal path too, so queries saw future keys.

Must fail: values, ragged_ends
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    W = 2 * window - 1                                           # keys in one query's band"),
]
