"""the caller's x was overwritten in place (e.g. the query projection written into it with np.matmul(..., out=x), to save a buffer); every output and cache is right, but the caller's input is destroyed.

Must fail: inputs_unchanged
"""
PATCH = [("v = self._split_heads(x @ W_v) ",
          "v = self._split_heads(x @ W_v); np.matmul(x.copy(), W_q, out=x); q = self._split_heads(x) ")]
