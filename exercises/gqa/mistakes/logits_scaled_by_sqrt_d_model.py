"""the scores were scaled by 1/sqrt(D) (the model width) instead of 1/sqrt(d_k) (the per-head width D // num_query_heads).

Must fail: values
"""
PATCH = [("(1.0 / math.sqrt(d_k))", "(1.0 / math.sqrt(D))")]
