"""the axis argument is ignored: the softmax is always taken over the last axis.

Must fail: axes
"""
PATCH = [("m = np.max(x, axis=axis, keepdims=True)", "axis = -1\n    m = np.max(x, axis=axis, keepdims=True)")]
