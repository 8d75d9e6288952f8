"""exp was taken without subtracting the maximum along the axis first, so large logits overflow to inf and the result to NaN (softmax(x) == softmax(x - max(x)): subtract the max).

Must fail: large_logits, dtype_max, hidden_values
"""
PATCH = [("e = np.exp(x - m)", "e = np.exp(x)"),
         ("out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)", "out = e / s")]
