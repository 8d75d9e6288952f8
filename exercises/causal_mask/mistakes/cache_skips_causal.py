"""with cached keys (kv_len > seq_len) the causal part was skipped and every key allowed, as if only a single decoding step could follow a cache: a multi-token chunk after a cache lets each query see the later queries of its own chunk. Query i may attend to keys j <= i + (kv_len - seq_len), cache or not.

Must fail: causal_kv_len

Source: https://github.com/Mikyx-1/TinyLLM/issues/17
The issue shows MultiHeadAttention applying the causal mask only `if cache is None`, so a multi-token prefill with a cache attached attended to future prompt tokens (fixed in Mikyx-1/TinyLLM#18).
"""
PATCH = [("mask = j <= i + offset                                   # (L_q, L_k) bottom-right aligned",
          "mask = (j <= i + offset) | (offset > 0)                  # no causal mask once a cache exists")]
