"""no causal mask: every new query attends to every token of its own call, future ones included.

Must fail: prefill_decode, chunked_prefill, no_cache_output
"""
PATCH = [("att = np.where(allowed, att, -np.inf)", "att = att")]
