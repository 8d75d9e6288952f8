"""the causal window counts from the wrong end: query i attended to keys i <= j < i + window (the future) instead of i - window < j <= i (its own key and the window - 1 before it).

Must fail: values, ragged_ends
"""
PATCH = [
    ("    idx = (pos - window + 1)[:, None] + np.arange(W)            # (L_q, W) the band's key indices",
     "    idx = (pos if causal else pos - window + 1)[:, None] + np.arange(W)            # (L_q, W) the band's key indices"),
]
