"""the default axis is 0 instead of the last axis (-1).

Must fail: values_nd
"""
PATCH = [("def softmax(x: torch.Tensor, axis: int = -1)", "def softmax(x: torch.Tensor, axis: int = 0)")]
