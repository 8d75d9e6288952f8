"""the 1/sqrt(d_k) scale was applied to the weights after the softmax instead of to the scores before it: rows no longer sum to 1.

Must fail: weights_basic, output_basic, scaling
"""
PATCH = [("scores = query @ np.swapaxes(key, -1, -2) / math.sqrt(d_k)     # (..., L_q, L_k)",
          "scores = query @ np.swapaxes(key, -1, -2)"),
         ("return _softmax_last(scores).astype(query.dtype, copy=False)",
          "return (_softmax_last(scores) / math.sqrt(d_k)).astype(query.dtype, copy=False)")]
