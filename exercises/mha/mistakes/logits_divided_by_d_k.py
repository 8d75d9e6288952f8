"""scores were divided by d_k instead of sqrt(d_k) (as when the 1/sqrt(d_k) scale is applied twice).

Must fail: self_attention
"""
PATCH = [("(1.0 / math.sqrt(d_k))", "(1.0 / d_k)")]
