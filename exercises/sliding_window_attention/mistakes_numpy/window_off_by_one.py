"""the window holds window + 1 keys: key j was kept for i - window <= j <= i (or |i - j| <= window when not causal); the contract keeps i - window < j <= i, the `window` most recent keys including the query's own (Longformer, Mistral).

Must fail: values, window_one, non_causal
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    W = window + 1 if causal else 2 * window + 1                    # keys in one query's band"),
    ("    idx = (pos - window + 1)[:, None] + np.arange(W)            # (L_q, W) the band's key indices",
     "    idx = (pos - window)    [:, None] + np.arange(W)            # (L_q, W) the band's key indices"),
]
