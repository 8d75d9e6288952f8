"""without a mask the window was not applied: with mask=None each query attended to every key up to its own position (every key when not causal), plain causal attention, while with a mask the window was right (the unmasked calls then cost L_q x L_k work and memory). The window restricts the keys on every call, masked or not.

Must fail: values, window_one, non_causal, cache_alignment, memory_scaling, flops_scaling

Source: https://github.com/unslothai/unsloth/pull/8253
The pull request says that with no packing and no padding mask unsloth's SDPA path fell through to is_causal, full causal attention with no window, so Mistral-style models attended past their sliding window; it builds the band mask for that case.
"""
PATCH = [
    ("    k, v = key.astype(work), value.astype(work)                 # (B, H, L_k, d_k), (B, H, L_k, d_v)\n",
     "    k, v = key.astype(work), value.astype(work)                 # (B, H, L_k, d_k), (B, H, L_k, d_v)\n"
     "    if mask is None:  # no mask: plain (causal) attention over every key, the window never applied\n"
     "        sd = q @ np.swapaxes(k, -1, -2)                          # (B, H, L_q, L_k)\n"
     "        if causal:\n"
     "            later = np.arange(L_k)[None, :] > (np.arange(L_q) + (L_k - L_q))[:, None]\n"
     "            sd = np.where(later, -np.inf, sd)\n"
     "        ed = np.exp(sd - sd.max(axis=-1, keepdims=True))\n"
     "        return ((ed / ed.sum(axis=-1, keepdims=True)) @ v).astype(query.dtype)\n"),
]
