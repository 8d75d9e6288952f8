"""scores were scaled by 1/sqrt(D), the model width, instead of 1/sqrt(d_k), the width of one head.

Must fail: self_attention
"""
PATCH = [("np.asarray(math.sqrt(d_k), dtype=query.dtype)", "np.asarray(math.sqrt(D), dtype=query.dtype)")]
