"""without a mask the window was not applied: with mask=None each query attended to every key up to its own position (every key when not causal), plain causal attention, while with a mask the window was right. The window restricts the keys on every call, masked or not.

Must fail: values, window_one, non_causal, cache_alignment

Source: https://github.com/unslothai/unsloth/pull/8253
The pull request says that with no packing and no padding mask unsloth's SDPA path fell through to is_causal, full causal attention with no window, so Mistral-style models attended past their sliding window; it builds the band mask for that case.
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    if mask is None:  # no mask: plain (causal) attention, the window is never applied\n"
     "        window = L_k\n"
     "    W = window if causal else 2 * window - 1                    # keys in one query's band"),
]
