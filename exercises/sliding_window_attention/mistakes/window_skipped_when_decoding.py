"""with L_q < L_k (queries after cached keys, as in decoding) the window was not applied: each query attended to every key up to its position i + L_k - L_q (every key when not causal), while with L_q == L_k the window was right. The window applies to queries after a cache too.

Must fail: cache_alignment

Source: https://github.com/karpathy/nanochat/issues/452
The issue shows nanochat's attention fallback answering single-token generation (Tq == 1) with F.scaled_dot_product_attention(q, k, v, is_causal=False) over the whole KV cache, without the sliding window (labelled potential_bug; pull request #456 proposed slicing K/V to the window on that path).
"""
PATCH = [
    ("    W = window if causal else 2 * window - 1                    # keys in one query's band",
     "    if L_q != L_k:  # queries after cached keys (decoding): the window is not applied\n"
     "        window = L_k\n"
     "    W = window if causal else 2 * window - 1                    # keys in one query's band"),
]
