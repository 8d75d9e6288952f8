"""scores were divided by d_k instead of sqrt(d_k).

Must fail: scaling
"""
PATCH = [("key.transpose(-1, -2) / math.sqrt(d_k)", "key.transpose(-1, -2) / d_k")]
