"""the denominator summed the (shifted) logits instead of their exponentials (the exp is missing in the sum): the result is exp(x - m) / sum(x - m), neither positive nor summing to 1.

Must fail: values_1d, values_nd, hidden_values

Source: https://github.com/p2irc/deepplantphenomics/pull/50
The pull request reports that the softmax formula in semantic_segmentation_model.py was missing an np.exp in the denominator, and adds it.
"""
PATCH = [("s = np.sum(e, axis=axis, keepdims=True)", "s = np.sum(x - m, axis=axis, keepdims=True)"),
         ("out = np.divide(e, s, out=np.zeros_like(e), where=s > 0)", "out = e / s")]
