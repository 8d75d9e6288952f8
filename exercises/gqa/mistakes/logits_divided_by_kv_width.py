"""the scores were scaled by 1/sqrt(num_kv_heads * d_k) (the width of the K projection) instead of 1/sqrt(d_k) with d_k = D // num_query_heads.

Must fail: values
"""
PATCH = [("(1.0 / math.sqrt(d_k))", "(1.0 / math.sqrt(H_kv * d_k))")]
