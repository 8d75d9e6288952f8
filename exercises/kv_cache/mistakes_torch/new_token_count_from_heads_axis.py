"""the number of new tokens was read from the heads axis of the (B, H, L, d_k) query (q.shape[1] = H) instead of its token axis (q.shape[2] = L): the cache offset T = S - H is wrong whenever H != L_new, so the causal mask lets queries see future keys or hides cached ones.

Must fail: prefill_decode, chunked_prefill

Source: https://github.com/fla-org/flash-linear-attention/issues/126
The issue shows GLA updating its cache with offset=q.shape[2] after a rearrange to (b, t, h, d), so the offset counted heads rather than tokens; the maintainers labelled it a bug and fixed it.
"""
PATCH = [("T = S - L                                                  # tokens cached before this call",
          "T = S - q.shape[1]                                         # tokens cached before this call")]
