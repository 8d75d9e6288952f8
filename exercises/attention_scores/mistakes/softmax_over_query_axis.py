"""the softmax was taken over the query axis (-2) instead of the key axis (-1).

Must fail: weights_basic
"""
PATCH = [("m = np.max(scores, axis=-1, keepdims=True)", "m = np.max(scores, axis=-2, keepdims=True)"),
         ("s = np.sum(e, axis=-1, keepdims=True)", "s = np.sum(e, axis=-2, keepdims=True)")]
