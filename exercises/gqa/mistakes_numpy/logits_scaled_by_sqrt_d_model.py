"""the scores were scaled by 1/sqrt(D) (the model width) instead of 1/sqrt(d_k) (the per-head width D // num_query_heads).

Must fail: values
"""
PATCH = [("np.asarray(math.sqrt(d_k), dtype=x.dtype)", "np.asarray(math.sqrt(D), dtype=x.dtype)")]
