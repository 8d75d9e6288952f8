"""the single global maximum of the whole array was subtracted instead of each slice's own maximum along the axis; slices far below it underflow to 0/0.

Must fail: large_logits
"""
PATCH = [("m = np.max(x, axis=axis, keepdims=True)", "m = np.max(x, keepdims=True)"),
         ("out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)", "out = e / s")]
