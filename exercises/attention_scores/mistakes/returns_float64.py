"""the results come back in float64 for float32 inputs: a float64 scalar such as np.sqrt(d_k) (or an astype(np.float64)) promoted the scores, and outputs must keep the input's dtype (divide by math.sqrt(d_k), or cast back).

Must fail: dtype_preserved
"""
PATCH = [("/ math.sqrt(d_k)     # (..., L_q, L_k)", "/ np.sqrt(d_k)       # (..., L_q, L_k)"),
         ("return _softmax_last(scores).astype(query.dtype, copy=False)", "return _softmax_last(scores)")]
