"""d_k was read from the wrong axis (query.shape[-2], the number of queries): scores were scaled by 1/sqrt(L_q) instead of 1/sqrt(d_k).

Must fail: weights_basic, scaling
"""
PATCH = [("d_k = query.shape[-1]", "d_k = query.shape[-2]")]
