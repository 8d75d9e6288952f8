"""the window holds window + 1 keys: key j was kept for i - window <= j <= i (or |i - j| <= window when not causal); the contract keeps i - window < j <= i, the `window` most recent keys including the query's own (Longformer, Mistral).

Must fail: values, window_one, non_causal

Source: https://github.com/huggingface/transformers/issues/39408
The issue shows transformers passing window_size=(sliding_window, sliding_window) to flash-attention, whose window [i - left, i + right] is inclusive, so a query saw 2 * sliding_window + 1 keys, sliding_window + 1 under causal masking; it is labelled bug and closed.
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    W = window + 1 if causal else 2 * window + 1                    # keys in one query's band"),
    ("    idx = (pos - window + 1).view(L_q, 1) + torch.arange(W)     # (L_q, W) the band's key indices",
     "    idx = (pos - window)    .view(L_q, 1) + torch.arange(W)     # (L_q, W) the band's key indices"),
]
