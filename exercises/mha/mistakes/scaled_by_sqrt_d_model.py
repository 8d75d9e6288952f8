"""scores were scaled by 1/sqrt(D), the model width, instead of 1/sqrt(d_k), the width of one head.

Must fail: self_attention
"""
PATCH = [("(1.0 / math.sqrt(d_k))", "(1.0 / math.sqrt(D))")]
