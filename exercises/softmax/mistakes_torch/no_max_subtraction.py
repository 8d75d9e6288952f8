"""exp was taken without subtracting the maximum along the axis first, so large logits overflow to inf and the result to NaN (softmax(x) == softmax(x - max(x)): subtract the max).

Must fail: large_logits, dtype_max
"""
PATCH = [("e = torch.exp(x - m)", "e = torch.exp(x)"),
         ("return torch.where(s > 0, e / safe, torch.zeros_like(e))", "return e / s")]
