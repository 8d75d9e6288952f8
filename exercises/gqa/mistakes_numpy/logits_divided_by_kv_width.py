"""the scores were scaled by 1/sqrt(num_kv_heads * d_k) (the width of the K projection) instead of 1/sqrt(d_k) with d_k = D // num_query_heads.

Must fail: values
"""
PATCH = [("np.asarray(math.sqrt(d_k), dtype=x.dtype)", "np.asarray(math.sqrt(H_kv * d_k), dtype=x.dtype)")]
