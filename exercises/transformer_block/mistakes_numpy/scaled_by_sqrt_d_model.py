"""the scores were scaled by 1/sqrt(D), the model width; each head's scores are scaled by 1/sqrt(d_k) with d_k = D / num_heads.

Must fail: values
"""
PATCH = [('/ np.sqrt(np.array(d_k, dtype=x.dtype))', '/ np.sqrt(np.array(D, dtype=x.dtype))')]
