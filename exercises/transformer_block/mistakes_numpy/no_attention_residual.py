"""the residual connection around attention is missing: h must be x + MHA(LN1(x)), not MHA(LN1(x)).

Must fail: values
"""
PATCH = [("h = x + attention(", "h = attention(")]
