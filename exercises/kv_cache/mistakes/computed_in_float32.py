"""every input was cast to float32 before computing, so float64 inputs lose precision and the output is float32 whatever the input dtype.

Must fail: float64, dtype_preserved
"""
PATCH = [("        B, L, D = x.shape\n        if D != self.d_model:",
          "        x, W_q, W_k, W_v, W_o = (np.asarray(a, dtype=np.float32) for a in (x, W_q, W_k, W_v, W_o))\n"
          "        B, L, D = x.shape\n        if D != self.d_model:")]
