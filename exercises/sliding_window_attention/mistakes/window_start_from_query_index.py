"""with L_q < L_k and causal=True query i saw keys i - window < j <= i + L_k - L_q, more than `window` keys: the causal limit was counted from its position p = i + L_k - L_q (bottom-right) but the window's first key from its index i (top-left). Count both edges of the band from p.

Must fail: cache_alignment

Source: https://github.com/trymirai/lalamo/pull/200
The pull request fixes DynamicKVCacheLayer.attention_mask, which applied the causal limit with tril(k=total_num_tokens - suffix_length) but the window with triu(k=1 - sliding_window_size) on the suffix's own row indices, wrong once a prefix was cached; the fix compares absolute query and key positions.
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    W = window + (L_k - L_q) if causal else 2 * window - 1      # causal: from i - window + 1 up to p"),
    ("    idx = (pos - window + 1).view(L_q, 1) + torch.arange(W)     # (L_q, W) the band's key indices",
     "    idx = ((torch.arange(L_q) if causal else pos) - window + 1).view(L_q, 1) + torch.arange(W)  # (L_q, W)"),
]
