"""with causal=False the window was still one-sided (i - window < j <= i): the non-causal window is two-sided, |i - j| < window (2 * window - 1 keys).

Must fail: non_causal
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    W = window                                                   # keys in one query's band"),
]
