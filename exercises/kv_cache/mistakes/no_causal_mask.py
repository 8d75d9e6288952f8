"""new token i also attended to the new tokens after it, as with no causal mask inside a multi-token prefill (or a mask whose offset hides nothing). Mask key j for new token i when j > T + i (T tokens already cached).

Must fail: prefill_decode, chunked_prefill, no_cache_output
"""
PATCH = [("att = np.where(allowed, att, -np.inf)", "att = att")]
