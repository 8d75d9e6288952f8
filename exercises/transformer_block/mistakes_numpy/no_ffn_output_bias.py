"""the second feed-forward bias b_2 was left out: out = h + GELU(LN2(h) W_1 + b_1) W_2 + b_2.

Must fail: values
"""
PATCH = [('return (h + f @ p["W_2"] + p["b_2"]).astype(x.dtype)', 'return (h + f @ p["W_2"]).astype(x.dtype)')]
