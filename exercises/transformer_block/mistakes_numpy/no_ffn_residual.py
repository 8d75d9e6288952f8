"""the residual connection around the feed-forward network is missing: out must be h + FFN(LN2(h)), not FFN(LN2(h)).

Must fail: values
"""
PATCH = [("return (h + f @ p[\"W_2\"] + p[\"b_2\"]).astype(x.dtype)", "return (f @ p[\"W_2\"] + p[\"b_2\"]).astype(x.dtype)")]
