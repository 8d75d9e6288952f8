"""the causal mask during decoding was aligned top-left (key j visible to new query i when j <= i) instead of bottom-right (j <= i + T, T tokens already cached).

Must fail: prefill_decode
"""
PATCH = [("torch.arange(L)[:, None] + T ", "torch.arange(L)[:, None] ")]
