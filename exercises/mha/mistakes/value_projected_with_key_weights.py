"""the values were projected with W_k instead of W_v (a projection matrix reused for two of query/key/value): the output mixes key projections and W_v gets no gradient.

Must fail: self_attention, cross_attention

Source: https://github.com/stevezheng23/reading_comprehension_tf/pull/284
The pull request "fix query/key/value project matrix reuse issue" fixes an attention layer that reused one projection matrix for more than one of query, key and value.
"""
PATCH = [("v = (value @ W_v).view(B, L_k, H, d_k).transpose(1, 2)", "v = (value @ W_k).view(B, L_k, H, d_k).transpose(1, 2)")]
